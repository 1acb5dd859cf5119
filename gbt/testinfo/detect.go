package testinfo

import (
	"reflect"
	"slices"
	"strings"

	"aimeter/sysinfo"
)

// FromHost turns the facts package sysinfo detected into test
// information to Merge with the tested party's (GB-7.7.1-a): one server record (CPU, sockets,
// accelerators, memory total, DMI model), the OS name and kernel, and the
// virtualization flag and component. Facts that detection cannot see
// (framework, storage, bus, nominal compute, …) are left unset.
func FromHost(h sysinfo.Host) Info {
	hw, sw := h.Hardware, h.Software
	var s Server
	s.Model = strings.TrimSpace(hw.Vendor + " " + hw.Product)
	s.CPU = CPU{Model: hw.CPU.Model, Cores: hw.CPU.PhysicalCores, Threads: hw.CPU.LogicalCores, FrequencyMHz: hw.CPU.FrequencyMHz}
	s.CPUSockets = hw.CPU.Sockets
	s.Memory.Total = ByteSize(hw.MemoryBytes)
	if n := len(hw.Accelerators); n > 0 {
		s.AcceleratorCount = n
		var names, drivers []string
		for _, a := range hw.Accelerators {
			if !slices.Contains(names, a.Name) {
				names = append(names, a.Name)
			}
			if a.DriverVersion != "" && !slices.Contains(drivers, a.DriverVersion) {
				drivers = append(drivers, a.DriverVersion)
			}
		}
		s.Accelerator.Name = strings.Join(names, " + ")
		s.Accelerator.DriverVersion = strings.Join(drivers, ", ")
		if len(names) == 1 {
			s.Accelerator.Memory = ByteSize(hw.Accelerators[0].MemoryBytes)
		}
	}
	info := Info{OS: OS{Name: sw.OSName, Kernel: sw.Kernel}}
	if !reflect.ValueOf(s).IsZero() {
		info.Servers = []Server{s}
	}
	var virt []string
	if sw.VirtualMachine != "" {
		virt = append(virt, "virtual machine: "+sw.VirtualMachine)
	}
	if sw.Container != "" {
		virt = append(virt, "container: "+sw.Container)
	}
	info.Virtualization = FlagOf(len(virt) > 0)
	if len(virt) > 0 {
		info.VirtualizationComponent.Name = strings.Join(virt, "; ")
	}
	return info
}

// Detect detects the machine it runs on and returns it as test information:
// FromHost of sysinfo.Detect.
func Detect() Info { return FromHost(sysinfo.Detect()) }
