package testinfo

import (
	"reflect"
	"runtime"
	"testing"

	"aimeter/sysinfo"
)

// hostGPU is what sysinfo detects from its host-gpu fixture: an x86 server
// with two NVIDIA GPUs on bare metal.
func hostGPU() sysinfo.Host {
	gpu := sysinfo.Accelerator{Vendor: "NVIDIA", Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, DriverVersion: "550.54.15", Source: "nvidia-smi"}
	return sysinfo.Host{
		Hardware: sysinfo.Hardware{
			Vendor: "Supermicro", Product: "SYS-821GE-TNHR",
			CPU: sysinfo.CPU{Model: "Intel(R) Xeon(R) Platinum 8480+", Sockets: 2, PhysicalCores: 4, LogicalCores: 8,
				FrequencyMHz: 2000, FrequencySource: "base_frequency"},
			MemoryBytes:  2113451776 * 1024,
			Accelerators: []sysinfo.Accelerator{gpu, gpu},
		},
		Software: sysinfo.Software{OSName: "Ubuntu 22.04.4 LTS", KernelName: "Linux", Kernel: "5.15.0-105-generic", Arch: runtime.GOARCH},
	}
}

// GB-7.7.1-a (auto-detection of 7.1 a) fields 12 and 15), GB-7.7.1-g (no
// virtualization on bare metal): an x86 server with two NVIDIA GPUs, as
// sysinfo detects it from its host-gpu fixture.
func TestInfoFromHostGPU(t *testing.T) {
	h := hostGPU()
	want := Info{
		Servers: []Server{{
			Model:            "Supermicro SYS-821GE-TNHR",
			AcceleratorCount: 2,
			CPU:              CPU{Model: "Intel(R) Xeon(R) Platinum 8480+", Cores: 4, Threads: 8, FrequencyMHz: 2000},
			CPUSockets:       2,
			Accelerator:      Accelerator{Name: "NVIDIA H100 80GB HBM3", Memory: 81559 << 20, DriverVersion: "550.54.15"},
			Memory:           Memory{Total: 2113451776 * 1024},
		}},
		OS:             OS{Name: "Ubuntu 22.04.4 LTS", Kernel: "5.15.0-105-generic"},
		Virtualization: NotUsed,
	}
	if info := FromHost(h); !reflect.DeepEqual(info, want) {
		t.Errorf("FromHost = %+v\nwant %+v", info, want)
	}
}

// GB-7.7.1-g: a container or virtual machine found by sysinfo makes
// virtualization "used" and names the component.
func TestInfoFromHostVirtualization(t *testing.T) {
	tests := []struct {
		why           string
		sw            sysinfo.Software
		wantFlag      Flag
		wantComponent string
	}{
		{"bare metal: not used, no component", sysinfo.Software{}, NotUsed, ""},
		{"a container alone", sysinfo.Software{Container: "docker"}, Used, "container: docker"},
		{"a virtual machine alone", sysinfo.Software{VirtualMachine: "kvm"}, Used, "virtual machine: kvm"},
		{"both: the machine first, then the container", sysinfo.Software{Container: "podman", VirtualMachine: "kvm"}, Used, "virtual machine: kvm; container: podman"},
	}
	for _, tc := range tests {
		info := FromHost(sysinfo.Host{Software: tc.sw})
		if info.Virtualization != tc.wantFlag || info.VirtualizationComponent.Name != tc.wantComponent {
			t.Errorf("%s: virtualization = %v %q, want %v %q", tc.why, info.Virtualization, info.VirtualizationComponent.Name, tc.wantFlag, tc.wantComponent)
		}
	}
}

// Nothing detected: no server record, only the virtualization flag.
func TestInfoFromHostNothing(t *testing.T) {
	if info := FromHost(sysinfo.Host{}); !reflect.DeepEqual(info, Info{Virtualization: NotUsed}) {
		t.Errorf("info = %+v", info)
	}
}

// Mixed accelerators: every distinct name and driver listed once, the memory
// left unknown because it differs.
func TestInfoFromHostMixedAccelerators(t *testing.T) {
	hw := sysinfo.Hardware{Accelerators: []sysinfo.Accelerator{
		{Name: "A", MemoryBytes: 1, DriverVersion: "1"},
		{Name: "B", MemoryBytes: 2, DriverVersion: "1"},
		{Name: "A", MemoryBytes: 1, DriverVersion: "2"},
	}}
	s := FromHost(sysinfo.Host{Hardware: hw}).Servers[0]
	if s.AcceleratorCount != 3 || s.Accelerator.Name != "A + B" || s.Accelerator.Memory != 0 || s.Accelerator.DriverVersion != "1, 2" {
		t.Errorf("server = %+v", s)
	}
}

// Detect of this machine always sets the virtualization flag.
func TestDetectThisMachine(t *testing.T) {
	if info := Detect(); info.Virtualization == 0 {
		t.Error("Detect left virtualization unset")
	}
}
