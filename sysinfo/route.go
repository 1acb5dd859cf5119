package sysinfo

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Route is the way a run's traffic to one server left the machine: the
// interface that carried it, so that a report can name the NIC (and its
// speed) on the path to the system under test.
type Route struct {
	// Target is the server as the run named it: a URL's host and port,
	// e.g. "10.0.0.5:8000" or "sut.example:443".
	Target string `json:"target"`
	// Address is the address Target resolved to, for which the route was
	// looked up; "" when it did not resolve.
	Address string `json:"address,omitempty"`
	// Interface is the name of the interface the traffic left by (a
	// NIC's Name); "" when unknown (Note says why).
	Interface string `json:"interface,omitempty"`
	// Gateway is the next hop of the route; "" for a destination on a
	// directly connected network, or when unknown.
	Gateway string `json:"gateway,omitempty"`
	// Method says how Interface was found: one of the RouteBy constants.
	Method string `json:"method,omitempty"`
	// Note says why Interface is unknown; "" when it is known.
	Note string `json:"note,omitempty"`
}

// The ways RouteTo finds the interface of a route, in the order it tries
// them.
const (
	// RouteByLoopback: the address is a loopback address (127.0.0.0/8,
	// ::1); the traffic never left the machine.
	RouteByLoopback = "loopback address"
	// RouteByLocal: the address is one of the machine's own (the kernel's
	// local table delivers it through the loopback device, whatever
	// interface holds it).
	RouteByLocal = "local address"
	// RouteByTable: the longest prefix matching the address in the main
	// routing table, /proc/net/route (IPv4) or /proc/net/ipv6_route
	// (IPv6), the lowest metric among equal prefixes. Policy routing (ip
	// rule) and VRFs are not followed.
	RouteByTable = "routing table"
	// RouteBySource: no routing table could be read (not Linux): a UDP
	// socket connected to the address (no packet is sent) shows the
	// source address the kernel chose, and the interface holding it is
	// named. Only on the real machine (Detector.FS nil).
	RouteBySource = "source address of a connected UDP socket"
)

// Routes resolves each target (a host and port, or a host) and finds the
// interface its traffic leaves by (RouteTo). A name that does not resolve
// within the timeout is a Route with a Note. It never fails.
func (d Detector) Routes(targets []string) []Route {
	var out []Route
	for _, t := range targets {
		host := t
		if h, _, err := net.SplitHostPort(t); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		addr, err := netip.ParseAddr(host)
		if err != nil {
			timeout := d.Timeout
			if timeout <= 0 {
				timeout = DefaultTimeout
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			addrs, lerr := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			cancel()
			if lerr != nil || len(addrs) == 0 {
				out = append(out, Route{Target: t, Note: fmt.Sprintf("%s does not resolve: %v", host, lerr)})
				continue
			}
			addr = addrs[0]
		}
		r := d.RouteTo(addr)
		r.Target = t
		out = append(out, r)
	}
	return out
}

// RouteTo finds the interface that traffic to addr leaves by: the
// loopback device for a loopback address or one of the machine's own,
// else the routing table's choice (see the RouteBy constants). Target is
// left empty.
func (d Detector) RouteTo(addr netip.Addr) Route {
	addr = addr.Unmap()
	r := Route{Address: addr.String()}
	nics := d.NICs()
	lo := "lo"
	for _, n := range nics {
		if n.Loopback {
			lo = n.Name
			break
		}
	}
	if addr.IsLoopback() {
		r.Interface, r.Method = lo, RouteByLoopback
		return r
	}
	for _, n := range nics {
		for _, a := range n.Addresses {
			if p, err := netip.ParsePrefix(a); err == nil && p.Addr() == addr {
				r.Interface, r.Method = lo, RouteByLocal
				return r
			}
		}
	}
	var table string
	var routes []tableRoute
	if addr.Is4() {
		table = d.read("proc/net/route")
		routes = parseRouteV4(table)
	} else {
		table = d.read("proc/net/ipv6_route")
		routes = parseRouteV6(table)
	}
	if table != "" {
		best := -1
		for i, rt := range routes {
			if !rt.prefix.Contains(addr) {
				continue
			}
			if best < 0 || rt.prefix.Bits() > routes[best].prefix.Bits() ||
				rt.prefix.Bits() == routes[best].prefix.Bits() && rt.metric < routes[best].metric {
				best = i
			}
		}
		r.Method = RouteByTable
		switch {
		case best < 0:
			r.Note = "no route to it in the main routing table"
		case routes[best].reject:
			r.Note = "the routing table rejects it (unreachable)"
		case routes[best].local:
			r.Interface, r.Method = lo, RouteByLocal
		default:
			r.Interface = routes[best].dev
			if g := routes[best].gateway; g.IsValid() && !g.IsUnspecified() {
				r.Gateway = g.String()
			}
		}
		return r
	}
	if d.FS != nil {
		r.Note = "no routing table readable (proc/net/route, proc/net/ipv6_route)"
		return r
	}
	return d.routeBySource(r, addr, nics)
}

// routeBySource asks the kernel for the source address of a UDP socket
// connected to addr and names the interface holding it.
func (d Detector) routeBySource(r Route, addr netip.Addr, nics []NIC) Route {
	r.Method = RouteBySource
	conn, err := net.DialTimeout("udp", netip.AddrPortFrom(addr, 9).String(), time.Second)
	if err != nil {
		r.Note = fmt.Sprintf("no route: %v", err)
		return r
	}
	local := conn.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
	conn.Close()
	for _, n := range nics {
		for _, a := range n.Addresses {
			if p, err := netip.ParsePrefix(a); err == nil && p.Addr() == local {
				r.Interface = n.Name
				return r
			}
		}
	}
	r.Note = fmt.Sprintf("the source address %s is on no interface found", local)
	return r
}

// tableRoute is one route of the kernel's routing table.
type tableRoute struct {
	dev     string
	prefix  netip.Prefix
	gateway netip.Addr
	metric  uint64
	reject  bool // RTF_REJECT: an unreachable route
	local   bool // RTF_LOCAL (IPv6): one of the machine's own addresses
}

// The route flags of linux/route.h and linux/ipv6_route.h.
const (
	rtfUp     = 0x0001
	rtfReject = 0x0200
	rtfLocal  = 0x80000000
)

// parseRouteV4 reads /proc/net/route: a header line, then "Iface
// Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT" with
// the addresses as hexadecimal 32-bit words in the kernel's byte order.
// Routes that are not up, and malformed lines, are skipped.
func parseRouteV4(text string) []tableRoute {
	var out []tableRoute
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 8 {
			continue
		}
		dst, ok1 := hexAddr4(f[1])
		gw, ok2 := hexAddr4(f[2])
		mask, ok3 := hexAddr4(f[7])
		flags, err1 := strconv.ParseUint(f[3], 16, 32)
		metric, err2 := strconv.ParseUint(f[6], 10, 64)
		if !ok1 || !ok2 || !ok3 || err1 != nil || err2 != nil || flags&rtfUp == 0 {
			continue
		}
		bits := maskBits(mask.As4())
		if bits < 0 {
			continue
		}
		p, err := dst.Prefix(bits)
		if err != nil {
			continue
		}
		out = append(out, tableRoute{dev: f[0], prefix: p, gateway: gw, metric: metric, reject: flags&rtfReject != 0})
	}
	return out
}

// hexAddr4 reads an IPv4 address of /proc/net/route: eight hexadecimal
// digits of a 32-bit word in the machine's byte order.
func hexAddr4(s string) (netip.Addr, bool) {
	if len(s) != 8 {
		return netip.Addr{}, false
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return netip.Addr{}, false
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(v))
	return netip.AddrFrom4(b), true
}

// maskBits is the prefix length of a contiguous netmask; -1 for one that
// is not contiguous.
func maskBits(m [4]byte) int {
	v := binary.BigEndian.Uint32(m[:])
	n := 0
	for v&0x80000000 != 0 {
		n++
		v <<= 1
	}
	if v != 0 {
		return -1
	}
	return n
}

// parseRouteV6 reads /proc/net/ipv6_route: "dest dest_plen src src_plen
// next_hop metric refcnt use flags dev", addresses as 32 hexadecimal
// digits in network order, lengths, metric and flags in hexadecimal.
func parseRouteV6(text string) []tableRoute {
	var out []tableRoute
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		dst, ok1 := hexAddr16(f[0])
		gw, ok2 := hexAddr16(f[4])
		plen, err1 := strconv.ParseUint(f[1], 16, 8)
		metric, err2 := strconv.ParseUint(f[5], 16, 32)
		flags, err3 := strconv.ParseUint(f[8], 16, 32)
		if !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil || flags&rtfUp == 0 {
			continue
		}
		p, err := dst.Prefix(int(plen))
		if err != nil {
			continue
		}
		out = append(out, tableRoute{dev: f[9], prefix: p, gateway: gw, metric: metric,
			reject: flags&rtfReject != 0, local: flags&rtfLocal != 0})
	}
	return out
}

// hexAddr16 reads an IPv6 address of /proc/net/ipv6_route.
func hexAddr16(s string) (netip.Addr, bool) {
	if len(s) != 32 {
		return netip.Addr{}, false
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return netip.AddrFrom16([16]byte(b)), true
}
