//go:build linux && (amd64 || arm64)

package telemetry

import (
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// cpuNs is the processor time used so far by this process and its ended
// children, ns.
func cpuNs(b *testing.B) int64 {
	var self, kids syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids); err != nil {
		b.Fatal(err)
	}
	tv := func(t syscall.Timeval) int64 { return t.Sec*1e9 + int64(t.Usec)*1e3 }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// benchPoll reads p b.N times and reports the processor time of one read
// (this process and the tools it starts, user and system) as cpu-ns/op,
// beside its wall time: what one sample of the source costs the machine
// under test. The stand-ins' own work (a shell printing a file, an
// in-process HTTP server) is counted too, so the figures bound the
// sources' cost from above.
func benchPoll(b *testing.B, p Poller) {
	ctx := context.Background()
	if _, err := p.Poll(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	start := cpuNs(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Poll(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuNs(b)-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkSampleCost(b *testing.B) {
	b.Run("rapl", func(b *testing.B) {
		r, err := OpenRAPL(raplFixture(b, "1000", "20", "262143328850"), "")
		if err != nil {
			b.Fatal(err)
		}
		benchPoll(b, r)
	})
	b.Run("nvml-stand-in", func(b *testing.B) {
		n, err := OpenNVML(fakeNVML(b), "")
		if err != nil {
			b.Fatal(err)
		}
		benchPoll(b, n)
	})
	for _, c := range []struct {
		name string
		open func(path, node string) (*Command, error)
		args string
		file string
	}{
		{"nvidia-smi-stand-in", OpenNvidiaSMI, strings.Join(NvidiaSMIQuery, " "), "testdata/nvidia-smi-query.txt"},
		{"npu-smi-stand-in", OpenNPUSMI, "info", "testdata/npu-smi-info.txt"},
		{"ipmi-stand-in", OpenIPMI, "dcmi power reading", "testdata/ipmitool-dcmi-power-reading.txt"},
	} {
		b.Run(c.name, func(b *testing.B) {
			src, err := c.open(standIn(b, "tool", c.args, c.file), "")
			if err != nil {
				b.Fatal(err)
			}
			benchPoll(b, src)
		})
	}
	b.Run("redfish-loopback", func(b *testing.B) {
		var watts atomic.Int64
		watts.Store(374)
		srv := redfishBMC(b, &watts, true)
		r, err := OpenRedfish(strings.Replace(srv.URL, "http://", "http://admin:s3cret@", 1)+"/redfish/v1/Chassis/1U", "")
		if err != nil {
			b.Fatal(err)
		}
		benchPoll(b, r)
	})
}
