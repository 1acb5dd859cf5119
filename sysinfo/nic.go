package sysinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// NIC is one network interface of the machine, as Linux exposes it under
// /sys/class/net/<name> (no root needed): the network interface
// characteristics of the LoadGen node that MLPerf's network division asks
// a report to contain. Zero fields are unknown: a value the kernel does
// not give is recorded as unknown, never guessed.
type NIC struct {
	// Name is the interface's name, e.g. "eth0", "ens1f0np0" or "lo".
	Name string `json:"name"`
	// SpeedMbps is the link speed in Mb/s (/sys/class/net/<name>/speed);
	// 0 when unknown: the kernel reports -1 (no link, or a virtual
	// device that does not know, such as virtio-net) or refuses the read
	// (EINVAL: loopback, bridges, interfaces that are down). SpeedNote
	// says which.
	SpeedMbps int64 `json:"speed_mbps,omitempty"`
	// SpeedNote says why SpeedMbps is unknown; "" when it is known.
	SpeedNote string `json:"speed_note,omitempty"`
	// Duplex is "full" or "half"; "" when unknown.
	Duplex string `json:"duplex,omitempty"`
	// MTU is the maximum transmission unit in bytes; 0 when unknown.
	MTU int `json:"mtu,omitempty"`
	// OperState is the RFC 2863 operational state: "up", "down",
	// "dormant", "lowerlayerdown", … or "unknown" as the kernel says it
	// (loopback and many virtual devices say "unknown" while working).
	OperState string `json:"operstate,omitempty"`
	// Loopback is true for the loopback device (ARPHRD_LOOPBACK).
	Loopback bool `json:"loopback,omitempty"`
	// Virtual is true for an interface with no device behind it
	// (/sys/class/net/<name>/device absent: loopback, bridges, bonds,
	// veth, tunnels, ifb, …).
	Virtual bool `json:"virtual,omitempty"`
	// Driver is the kernel driver of the device, e.g. "mlx5_core", "ice"
	// or "virtio_net"; "" for a virtual interface or when unknown.
	Driver string `json:"driver,omitempty"`
	// PCIAddress is the device's PCI address, e.g. "0000:3b:00.0"; "" for
	// a device that is not a PCI function (virtio's own bus, USB) or
	// when unknown.
	PCIAddress string `json:"pci_address,omitempty"`
	// PCIID is the PCI vendor and device id, "15B3:101D"; it names the
	// NIC's model (the PCI ID database's entry). "" when unknown.
	PCIID string `json:"pci_id,omitempty"`
	// NUMANode is the NUMA node the device is attached to; nil when the
	// kernel does not say (no device, -1, a machine of one node without
	// NUMA in the kernel).
	NUMANode *int `json:"numa_node,omitempty"`
	// Addresses are the interface's addresses with their prefix
	// lengths, e.g. "192.0.2.10/24", "fd00::2/64"; from the kernel
	// through net.Interfaces.
	Addresses []string `json:"addresses,omitempty"`
}

// Speed is the link speed as the report shows it: "100 Gb/s",
// "2.5 Gb/s", "100 Mb/s", or "unknown" with its reason.
func (n NIC) Speed() string {
	switch {
	case n.SpeedMbps <= 0 && n.SpeedNote != "":
		return "unknown (" + n.SpeedNote + ")"
	case n.SpeedMbps <= 0:
		return "unknown"
	case n.SpeedMbps%1000 == 0:
		return fmt.Sprintf("%d Gb/s", n.SpeedMbps/1000)
	case n.SpeedMbps >= 1000:
		return strconv.FormatFloat(float64(n.SpeedMbps)/1000, 'f', -1, 64) + " Gb/s"
	}
	return fmt.Sprintf("%d Mb/s", n.SpeedMbps)
}

// pciAddrRE matches a PCI function's address: domain:bus:device.function.
var pciAddrRE = regexp.MustCompile(`^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$`)

// NICs detects the network interfaces of the machine: every entry of
// /sys/class/net, sorted by name, with its addresses from Addrs. A fact
// that cannot be read stays unknown; nil when the directory cannot be
// read (not Linux, or a fixture without it).
func (d Detector) NICs() []NIC {
	entries, err := fs.ReadDir(d.fsys(), "sys/class/net")
	if err != nil {
		return nil
	}
	var nics []NIC
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "bonding_masters" {
			continue
		}
		nics = append(nics, d.nic(name))
	}
	slices.SortFunc(nics, func(a, b NIC) int { return strings.Compare(a.Name, b.Name) })
	return nics
}

// nic reads one interface.
func (d Detector) nic(name string) NIC {
	dir := "sys/class/net/" + name
	n := NIC{Name: name}
	n.SpeedMbps, n.SpeedNote = d.linkSpeed(dir + "/speed")
	if v := strings.TrimSpace(d.read(dir + "/duplex")); v == "full" || v == "half" {
		n.Duplex = v
	}
	n.MTU, _ = strconv.Atoi(strings.TrimSpace(d.read(dir + "/mtu")))
	n.OperState = strings.TrimSpace(d.read(dir + "/operstate"))
	n.Loopback = strings.TrimSpace(d.read(dir+"/type")) == "772" // ARPHRD_LOOPBACK
	if !d.exists(dir + "/device") {
		n.Virtual = true
	} else {
		uevent := map[string]string{}
		for line := range strings.Lines(d.read(dir + "/device/uevent")) {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
				uevent[k] = v
			}
		}
		// The driver is the device's driver link's name; uevent's DRIVER
		// says the same where the link cannot be read.
		if target, err := fs.ReadLink(d.fsys(), dir+"/device/driver"); err == nil {
			n.Driver = path.Base(target)
		} else {
			n.Driver = uevent["DRIVER"]
		}
		if a := uevent["PCI_SLOT_NAME"]; pciAddrRE.MatchString(a) {
			n.PCIAddress = a
		} else if target, err := fs.ReadLink(d.fsys(), dir+"/device"); err == nil && pciAddrRE.MatchString(path.Base(target)) {
			n.PCIAddress = path.Base(target)
		}
		n.PCIID = uevent["PCI_ID"]
		if v, err := strconv.Atoi(strings.TrimSpace(d.read(dir + "/device/numa_node"))); err == nil && v >= 0 {
			n.NUMANode = &v
		}
	}
	n.Addresses = d.addresses(name)
	return n
}

// linkSpeed reads /sys/class/net/<name>/speed: Mb/s, or 0 and why it is
// unknown.
func (d Detector) linkSpeed(name string) (int64, string) {
	b, err := fs.ReadFile(d.fsys(), name)
	if err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return 0, "the kernel gives none (EINVAL): a virtual or down interface"
		}
		return 0, "not readable"
	}
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Sprintf("unreadable value %q", s)
	case v <= 0:
		// SPEED_UNKNOWN is -1; some drivers report 0 or 65535's
		// negative twin, (u32)-1 printed signed.
		return 0, fmt.Sprintf("the kernel reports %d: no link, or a device that does not know its speed", v)
	}
	return v, ""
}

// addresses are the addresses of the interface name: Detector.Addrs's.
func (d Detector) addresses(name string) []string {
	addrs := d.Addrs
	if addrs == nil {
		addrs = interfaceAddrs
	}
	ps, err := addrs(name)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.String())
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// interfaceAddrs are the addresses of the real interface name.
func interfaceAddrs(name string) ([]netip.Prefix, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		ones, _ := ipn.Mask.Size()
		out = append(out, netip.PrefixFrom(ip.Unmap(), ones))
	}
	return out, nil
}
