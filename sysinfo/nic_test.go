package sysinfo

import (
	"encoding/binary"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// einvalFS is a fixture tree whose named files fail to read with EINVAL,
// as /sys/class/net/<virtual>/speed does on Linux.
type einvalFS struct {
	fs.FS
	einval map[string]bool
}

func (f einvalFS) Open(name string) (fs.File, error) {
	if f.einval[name] {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EINVAL}
	}
	return f.FS.Open(name)
}

func (f einvalFS) ReadLink(name string) (string, error)   { return fs.ReadLink(f.FS, name) }
func (f einvalFS) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(f.FS, name) }

// nicFixture is the detector of testdata/nic-host: a 100 Gb/s Mellanox
// port on NUMA node 1, an unplugged Intel port, a virtio NIC, a bridge and
// loopback, with these addresses.
func nicFixture() Detector {
	addrs := map[string][]netip.Prefix{
		"lo":        {netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("::1/128")},
		"eth0":      {netip.MustParsePrefix("192.0.2.10/24"), netip.MustParsePrefix("fd00::2/64")},
		"ens1f0np0": {netip.MustParsePrefix("10.10.0.7/16")},
	}
	return Detector{
		FS: einvalFS{FS: os.DirFS("testdata/nic-host"), einval: map[string]bool{
			"sys/class/net/lo/speed": true, "sys/class/net/lo/duplex": true,
			"sys/class/net/br0/speed": true, "sys/class/net/br0/duplex": true,
		}},
		Run:   notFound,
		Addrs: func(name string) ([]netip.Prefix, error) { return addrs[name], nil },
	}
}

// The NICs of a fake /sys tree: every fact Linux exposes there, and the
// unknown speeds recorded as unknown with the reason, never guessed.
func TestNICsFixture(t *testing.T) {
	one := 1
	einval := "the kernel gives none (EINVAL): a virtual or down interface"
	want := []NIC{
		{Name: "br0", SpeedNote: einval, MTU: 1500, OperState: "up", Virtual: true},
		{Name: "eno1", SpeedNote: "the kernel reports -1: no link, or a device that does not know its speed", MTU: 1500,
			OperState: "down", Driver: "e1000e", PCIAddress: "0000:00:1f.6", PCIID: "8086:15BB"},
		{Name: "ens1f0np0", SpeedMbps: 100000, Duplex: "full", MTU: 9000, OperState: "up", Driver: "mlx5_core",
			PCIAddress: "0000:3b:00.0", PCIID: "15B3:101D", NUMANode: &one, Addresses: []string{"10.10.0.7/16"}},
		{Name: "eth0", SpeedNote: "the kernel reports -1: no link, or a device that does not know its speed", MTU: 1400,
			OperState: "up", Driver: "virtio_net", Addresses: []string{"192.0.2.10/24", "fd00::2/64"}},
		{Name: "lo", SpeedNote: einval, MTU: 65536, OperState: "unknown", Loopback: true, Virtual: true,
			Addresses: []string{"127.0.0.1/8", "::1/128"}},
	}
	d := nicFixture()
	got := d.NICs()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NICs:\n%+v\nwant\n%+v", got, want)
	}
	if hw := d.Hardware(); !reflect.DeepEqual(hw.NICs, want) {
		t.Errorf("Hardware().NICs = %+v", hw.NICs)
	}
	if s := SystemOf(d.Hardware()); !reflect.DeepEqual(s.NICs, want) {
		t.Errorf("SystemOf: NICs = %+v", s.NICs)
	}
	for _, tc := range []struct {
		n    NIC
		want string
	}{
		{NIC{SpeedMbps: 100000}, "100 Gb/s"},
		{NIC{SpeedMbps: 2500}, "2.5 Gb/s"},
		{NIC{SpeedMbps: 100}, "100 Mb/s"},
		{want[1], "unknown (the kernel reports -1: no link, or a device that does not know its speed)"},
		{NIC{}, "unknown"},
	} {
		if got := tc.n.Speed(); got != tc.want {
			t.Errorf("Speed of %d Mb/s = %q, want %q", tc.n.SpeedMbps, got, tc.want)
		}
	}
}

// The route to each address names the interface, by the method the
// address calls for: loopback, a local address, the longest prefix of the
// routing table (the lower metric between equal ones), IPv6's table.
func TestRouteToFixture(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the fixture's /proc/net/route is a little-endian machine's")
	}
	d := nicFixture()
	for _, tc := range []struct {
		addr string
		want Route
		why  string
	}{
		{"127.0.0.1", Route{Address: "127.0.0.1", Interface: "lo", Method: RouteByLoopback}, "a loopback address never leaves the machine"},
		{"::1", Route{Address: "::1", Interface: "lo", Method: RouteByLoopback}, "IPv6 loopback"},
		{"10.10.0.7", Route{Address: "10.10.0.7", Interface: "lo", Method: RouteByLocal}, "the machine's own address on ens1f0np0 goes through loopback"},
		{"10.10.9.9", Route{Address: "10.10.9.9", Interface: "ens1f0np0", Method: RouteByTable}, "10.10.0.0/16 is ens1f0np0's"},
		{"10.10.5.20", Route{Address: "10.10.5.20", Interface: "ens1f0np0", Method: RouteByTable}, "two /24 routes: the metric 50 one wins over eno1's 200"},
		{"192.0.2.77", Route{Address: "192.0.2.77", Interface: "eth0", Method: RouteByTable}, "the directly connected /24 beats the default route"},
		{"198.51.100.1", Route{Address: "198.51.100.1", Interface: "eth0", Gateway: "192.0.2.1", Method: RouteByTable}, "the default route, with its gateway"},
		{"192.168.3.4", Route{Address: "192.168.3.4", Interface: "eth0", Gateway: "192.0.2.1", Method: RouteByTable}, "a route that is not up is skipped"},
		{"169.254.1.1", Route{Address: "169.254.1.1", Method: RouteByTable, Note: "the routing table rejects it (unreachable)"}, "a reject route"},
		{"fd10::5", Route{Address: "fd10::5", Interface: "ens1f0np0", Method: RouteByTable}, "fd10::/64 is ens1f0np0's"},
		{"fd00::9", Route{Address: "fd00::9", Interface: "eth0", Method: RouteByTable}, "fd00::/64 is eth0's"},
		{"fd00::2", Route{Address: "fd00::2", Interface: "lo", Method: RouteByLocal}, "eth0's own IPv6 address"},
		{"2001:db8::1", Route{Address: "2001:db8::1", Interface: "eth0", Gateway: "fd00::1", Method: RouteByTable}, "the IPv6 default route, not lo's reject route of equal length"},
		{"::ffff:10.10.9.9", Route{Address: "10.10.9.9", Interface: "ens1f0np0", Method: RouteByTable}, "an IPv4-mapped address is its IPv4 address"},
	} {
		if got := d.RouteTo(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("%s (%s): %+v, want %+v", tc.addr, tc.why, got, tc.want)
		}
	}
	rs := d.Routes([]string{"10.10.9.9:8000", "[fd10::5]:443", "127.0.0.1"})
	if len(rs) != 3 || rs[0].Target != "10.10.9.9:8000" || rs[0].Interface != "ens1f0np0" ||
		rs[1].Target != "[fd10::5]:443" || rs[1].Interface != "ens1f0np0" || rs[2].Interface != "lo" {
		t.Errorf("Routes: %+v", rs)
	}
	if got := (System{Routes: rs}).TrafficInterfaces(); !reflect.DeepEqual(got, []string{"ens1f0np0", "lo"}) {
		t.Errorf("TrafficInterfaces = %v", got)
	}
}

// Without a routing table to read, a fixture names no interface and says
// why; an unresolvable name is a note, not a failure.
func TestRouteToGaps(t *testing.T) {
	d := Detector{FS: os.DirFS(t.TempDir()), Run: notFound, Addrs: func(string) ([]netip.Prefix, error) { return nil, nil }}
	r := d.RouteTo(netip.MustParseAddr("10.1.2.3"))
	if r.Interface != "" || !strings.Contains(r.Note, "no routing table") {
		t.Errorf("no table: %+v", r)
	}
	rs := d.Routes([]string{"no-such-host.invalid:80"})
	if len(rs) != 1 || rs[0].Interface != "" || !strings.Contains(rs[0].Note, "does not resolve") {
		t.Errorf("unresolvable: %+v", rs)
	}
}

// The routing tables' parsers take only well-formed, up routes.
func TestParseRoutes(t *testing.T) {
	v4 := "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n" +
		"eth0\tzz\t00000000\t0001\t0\t0\t0\t00000000\n" + // bad destination
		"eth0\t00000000\t00000000\t0001\t0\t0\t0\t00FF00FF\n" + // mask not contiguous
		"eth0\t00000000\t00000000\t0001\t0\t0\t0\n" // short
	if got := parseRouteV4(v4); len(got) != 0 {
		t.Errorf("malformed IPv4 routes read: %+v", got)
	}
	if got := parseRouteV6("xyz 40 0 0 0 0 0 0 1 eth0\n"); len(got) != 0 {
		t.Errorf("malformed IPv6 routes read: %+v", got)
	}
}

// FuzzParseRoutes: the routing tables' parsers never panic, and every
// route they return has a valid prefix and a device.
func FuzzParseRoutes(f *testing.F) {
	for _, name := range []string{"route", "ipv6_route"} {
		b, err := os.ReadFile("testdata/nic-host/proc/net/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range append(parseRouteV4(s), parseRouteV6(s)...) {
			if !r.prefix.IsValid() || r.dev == "" {
				t.Fatalf("route %+v from %q", r, s)
			}
		}
	})
}

// On this machine's own /sys: what is certain whatever the machine. Every
// interface the kernel lists is recorded, loopback is found and marked,
// a speed is either positive or unknown with a reason, and the route to
// 127.0.0.1 is the loopback device.
func TestNICsRealMachine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sysfs is Linux's")
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skip(err)
	}
	nics := DetectHardware().NICs
	byName := map[string]NIC{}
	for _, n := range nics {
		byName[n.Name] = n
		if (n.SpeedMbps > 0) == (n.SpeedNote != "") {
			t.Errorf("%s: speed %d Mb/s with note %q: one or the other", n.Name, n.SpeedMbps, n.SpeedNote)
		}
		if n.MTU <= 0 {
			t.Errorf("%s: MTU %d", n.Name, n.MTU)
		}
	}
	lo := ""
	for _, i := range ifs {
		n, ok := byName[i.Name]
		if !ok {
			t.Errorf("interface %s (net.Interfaces) not recorded", i.Name)
			continue
		}
		if n.MTU != i.MTU {
			t.Errorf("%s: MTU %d, net.Interfaces says %d", i.Name, n.MTU, i.MTU)
		}
		if i.Flags&net.FlagLoopback != 0 {
			lo = i.Name
			if !n.Loopback || !n.Virtual || n.SpeedMbps != 0 {
				t.Errorf("loopback %s recorded as %+v", i.Name, n)
			}
		}
	}
	if lo == "" {
		t.Skip("no loopback interface")
	}
	if r := (Detector{}).RouteTo(netip.MustParseAddr("127.0.0.1")); r.Interface != lo || r.Method != RouteByLoopback {
		t.Errorf("route to 127.0.0.1: %+v", r)
	}
}
