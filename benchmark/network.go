package benchmark

import (
	"net/url"
	"strings"

	"aimeter/loadgen"
	"aimeter/sysdesc"
	"aimeter/sysinfo"
)

// whereNetworkDivision is where Plan.Division applies.
const whereNetworkDivision = "an MLPerf run (not a GB/T test) of a network SUT (SUT.Kind openai, kserve or dispatch, or a Custom SUT) " +
	"in the Server or Offline scenario: MLPerf's network division has only the datacenter suite"

// networkDivision reports whether Division applies to the run v sees.
func (v *view) networkDivision() bool {
	p := v.p
	network := p.Custom != nil || p.SUT.KindOrNull().IsNetwork()
	return p.GBT == nil && network && (v.scenarioIs(loadgen.Server) || v.scenarioIs(loadgen.Offline))
}

// systemRecord checks Division and reads SystemDesc: the record the
// bundle stores (system_desc.json), nil for neither. An error is a
// *UsageError naming the field.
func (p *Plan) systemRecord() (*sysdesc.Record, error) {
	if p.Division != "" && p.Division != "network" {
		return nil, usage("Division", "Division %q: only \"network\" is declared (MLPerf's network division); a closed or open result needs no mark, and the system description's division field records it", p.Division)
	}
	if p.SystemDesc == "" && p.Division == "" {
		return nil, nil
	}
	rec := &sysdesc.Record{}
	if p.SystemDesc != "" {
		var err error
		if rec, err = sysdesc.Load(p.SystemDesc); err != nil {
			return nil, usage("SystemDesc", "SystemDesc %v", err)
		}
	}
	if err := rec.Declare(p.Division); err != nil {
		return nil, usage("SystemDesc", "SystemDesc %s: %v", p.SystemDesc, err)
	}
	return rec, nil
}

// routes are the interfaces the traffic to a network SUT's servers
// leaves by (sysinfo.Detector.Routes); nil for another SUT.
func (r *runner) routes() []sysinfo.Route {
	c := &r.plan.SUT
	if r.plan.Custom != nil || !c.KindOrNull().IsNetwork() {
		return nil
	}
	return sysinfo.Detector{}.Routes(serverTargets(c.Net.URLs))
}

// serverTargets are the hosts and ports of servers' URLs, each once; a
// URL without a scheme (a gRPC host:port) is taken as host:port.
func serverTargets(urls []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, raw := range urls {
		if !strings.Contains(raw, "://") {
			raw = "tcp://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || seen[u.Host] {
			continue
		}
		seen[u.Host] = true
		out = append(out, u.Host)
	}
	return out
}
