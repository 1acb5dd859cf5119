package telemetry

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// MaxRedfishBody bounds the size of one Redfish answer Redfish reads.
const MaxRedfishBody = 1 << 20

// Redfish is a Poller of a BMC's power through the DMTF Redfish API: a
// Chassis's EnvironmentMetrics ("PowerWatts", device "chassis"; where a
// BMC gives no PowerWatts, its "EnergykWh" counter, read as the joules
// counted since the first read: the schema gives it no wrap, so a drop is
// a reset, and that step, or a rise above the ceiling, adds nothing and is
// a gap), or else the
// deprecated Power resource ("PowerControl[].PowerConsumedWatts", devices
// "power-control-<MemberId>"). A low-rate source: BMCs refresh their
// sensors every few seconds and answer slowly.
type Redfish struct {
	powerCeiling
	spec     string
	node     string
	resource string // the URL read each poll
	env      bool   // an EnvironmentMetrics resource, else Power
	user     string
	password string
	client   *http.Client

	mu       sync.Mutex
	counted  counter            // EnergykWh, where read
	capacity map[string]float64 // PowerControl[].PowerCapacityWatts by device, W
	now      func() time.Time   // nil: time.Now (tests set a clock)
}

// PowerCeiling is a device's ceiling: its PowerControl's
// PowerCapacityWatts (the power the chassis can be allotted) times
// LimitMargin where the BMC gives one, else the configured ceiling.
func (r *Redfish) PowerCeiling(_, device string) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.limitCeiling(r.capacity[device])
}

// readCapacities keeps the PowerCapacityWatts of each PowerControl entry
// of doc; an entry without one, or that does not parse, has none.
func (r *Redfish) readCapacities(doc map[string]json.RawMessage) {
	var pcs []struct {
		MemberID           string   `json:"MemberId"`
		PowerCapacityWatts *float64 `json:"PowerCapacityWatts"`
	}
	if json.Unmarshal(doc["PowerControl"], &pcs) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.capacity = map[string]float64{}
	for i, pc := range pcs {
		id := pc.MemberID
		if id == "" {
			id = strconv.Itoa(i)
		}
		if pc.PowerCapacityWatts != nil && *pc.PowerCapacityWatts > 0 {
			r.capacity["power-control-"+id] = *pc.PowerCapacityWatts
		}
	}
}

// counter counts a source's energy counter without a wrap (Redfish's
// EnergykWh, a Prometheus series) in joules since its first reading.
type counter struct {
	seen  bool
	last  float64 // the last raw value, J
	sum   float64 // J counted
	lastT int64   // when it was read last, ns on any one clock
}

// step takes the raw value v (J) read at t (ns) and returns the joules
// counted since the first reading, and the reason when this step is not
// counted (counterStep with no range: a drop is a reset).
func (c *counter) step(v float64, t int64, ceilingW float64) (sum float64, why string) {
	if c.seen {
		rise, w := counterStep(c.last, v, 0, t-c.lastT, ceilingW)
		c.sum += rise
		why = w
	}
	c.seen, c.last, c.lastT = true, v, t
	return c.sum, why
}

// OpenRedfish opens a Redfish source at rawURL: a Chassis
// (https://BMC/redfish/v1/Chassis/ID), its EnvironmentMetrics or its Power
// resource. User and password, if any, come from the URL
// (https://USER:PASSWORD@BMC/…) and are sent as HTTP basic
// authentication; the spec kept in telemetry.json hides the password.
// A "#insecure" fragment accepts the BMC's self-signed certificate. It
// reads the resource once (within OpenTimeout), to fail before the run.
func OpenRedfish(rawURL, node string) (*Redfish, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("redfish: URL %q: want http(s)://[USER:PASSWORD@]BMC/redfish/v1/Chassis/ID", rawURL)
	}
	r := &Redfish{node: node}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if u.Fragment == "insecure" {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // #nosec G402 -- asked for with #insecure: BMCs use self-signed certificates
	} else if u.Fragment != "" {
		return nil, fmt.Errorf("redfish: #%s: the only option is #insecure", u.Fragment)
	}
	r.client = &http.Client{Transport: tr}
	if u.User != nil {
		r.user = u.User.Username()
		r.password, _ = u.User.Password()
	}
	r.spec = "redfish:" + u.Redacted()
	u.User, u.Fragment = nil, ""
	ctx, cancel := context.WithTimeout(context.Background(), OpenTimeout)
	defer cancel()
	// Find the resource with the readings: the one named, or its
	// EnvironmentMetrics, or its Power.
	doc, err := r.get(ctx, u.String())
	if err != nil {
		return nil, err
	}
	r.resource = u.String()
	if _, ok := doc["PowerWatts"]; ok {
		r.env = true
	} else if _, ok := doc["EnergykWh"]; ok {
		r.env = true
	} else if _, ok := doc["PowerControl"]; !ok {
		link := ""
		for _, name := range []string{"EnvironmentMetrics", "Power"} {
			if l := odataID(doc[name]); l != "" {
				link, r.env = l, name == "EnvironmentMetrics"
				break
			}
		}
		if link == "" {
			return nil, fmt.Errorf("redfish: %s has no PowerWatts or PowerControl, and no EnvironmentMetrics or Power link", r.resource)
		}
		ref, err := url.Parse(link)
		if err != nil {
			return nil, fmt.Errorf("redfish: link %q: %w", link, err)
		}
		r.resource = u.ResolveReference(ref).String()
	}
	if _, err := r.Poll(ctx); err != nil {
		return nil, fmt.Errorf("redfish: the first read failed: %w", err)
	}
	return r, nil
}

// Name is "redfish".
func (*Redfish) Name() string { return "redfish" }

// Spec is how it was asked for, without the password.
func (r *Redfish) Spec() string { return r.spec }

// Notes says what is read, and that it is a low-rate source.
func (r *Redfish) Notes() []string {
	what := "Power.PowerControl[].PowerConsumedWatts (deprecated schema)"
	if r.env {
		what = "EnvironmentMetrics.PowerWatts (EnergykWh where no PowerWatts)"
	}
	return []string{"redfish " + what + " at " + r.resource,
		"a low-rate source: BMC sensors refresh every few seconds and lag; MLPerf Power does not accept BMC readings; use a --power-period of several seconds"}
}

// get reads one Redfish resource as a JSON object.
func (r *Redfish) get(ctx context.Context, u string) (map[string]json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if r.user != "" {
		req.SetBasicAuth(r.user, r.password)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("redfish: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxRedfishBody))
	if err != nil {
		return nil, fmt.Errorf("redfish: %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("redfish: %s: HTTP %s", u, resp.Status)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("redfish: %s: %w", u, err)
	}
	return doc, nil
}

// odataID is the "@odata.id" of a link object, "" for none.
func odataID(raw json.RawMessage) string {
	var l struct {
		ID string `json:"@odata.id"`
	}
	if raw == nil || json.Unmarshal(raw, &l) != nil {
		return ""
	}
	return l.ID
}

// Poll reads the resource.
func (r *Redfish) Poll(ctx context.Context) ([]Reading, error) {
	doc, err := r.get(ctx, r.resource)
	if err != nil {
		return nil, err
	}
	if !r.env {
		r.readCapacities(doc)
		return parsePowerControl(doc, r.node)
	}
	rs, err := parseEnvironmentMetrics(doc, r.node)
	var gaps SeriesGaps
	for i := range rs {
		if rs[i].Kind != Energy {
			continue
		}
		// EnergykWh has no wrap: a drop is the BMC's ResetMetrics or
		// a reset of the BMC.
		now := time.Now
		if r.now != nil {
			now = r.now
		}
		r.mu.Lock()
		sum, why := r.counted.step(rs[i].Value, now().UnixNano(), r.limitCeiling(r.capacity[rs[i].Device]))
		r.mu.Unlock()
		rs[i].Value = sum
		if why != "" {
			gaps = append(gaps, Gap{Node: r.node, Device: rs[i].Device, Kind: Energy, Reason: "EnergykWh: " + why})
		}
	}
	if err == nil && gaps != nil {
		return rs, gaps
	}
	return rs, err
}

// sensorReading is a Redfish SensorExcerpt's Reading: nil when null.
func sensorReading(raw json.RawMessage, field string) (*float64, error) {
	if raw == nil {
		return nil, nil
	}
	var s struct {
		Reading *float64 `json:"Reading"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("redfish: %s: %w", field, err)
	}
	if s.Reading != nil && !(*s.Reading >= 0) {
		return nil, fmt.Errorf("redfish: %s.Reading %v: want ≥ 0", field, *s.Reading)
	}
	return s.Reading, nil
}

// parseEnvironmentMetrics reads PowerWatts.Reading (W) or, without it,
// EnergykWh.Reading (a counter, kWh, stored in J).
func parseEnvironmentMetrics(doc map[string]json.RawMessage, node string) ([]Reading, error) {
	w, err := sensorReading(doc["PowerWatts"], "PowerWatts")
	if err != nil {
		return nil, err
	}
	if w != nil {
		return []Reading{{Node: node, Device: "chassis", Kind: Power, Value: *w}}, nil
	}
	e, err := sensorReading(doc["EnergykWh"], "EnergykWh")
	if err != nil {
		return nil, err
	}
	if e != nil {
		return []Reading{{Node: node, Device: "chassis", Kind: Energy, Value: *e * 3.6e6}}, nil
	}
	return nil, errors.New("redfish: EnvironmentMetrics has no PowerWatts or EnergykWh reading")
}

// parsePowerControl reads PowerControl[].PowerConsumedWatts.
func parsePowerControl(doc map[string]json.RawMessage, node string) ([]Reading, error) {
	var pcs []struct {
		MemberID           string   `json:"MemberId"`
		PowerConsumedWatts *float64 `json:"PowerConsumedWatts"`
	}
	if err := json.Unmarshal(doc["PowerControl"], &pcs); err != nil {
		return nil, fmt.Errorf("redfish: PowerControl: %w", err)
	}
	var rs []Reading
	for i, pc := range pcs {
		if pc.PowerConsumedWatts == nil {
			continue
		}
		if !(*pc.PowerConsumedWatts >= 0) {
			return nil, fmt.Errorf("redfish: PowerControl[%d].PowerConsumedWatts %v: want ≥ 0", i, *pc.PowerConsumedWatts)
		}
		id := pc.MemberID
		if id == "" {
			id = strconv.Itoa(i)
		}
		rs = append(rs, Reading{Node: node, Device: "power-control-" + id, Kind: Power, Value: *pc.PowerConsumedWatts})
	}
	if len(rs) == 0 {
		return nil, errors.New("redfish: no PowerControl entry has a PowerConsumedWatts")
	}
	return rs, nil
}
