package telemetry

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A BMC speaking Redfish as the DMTF schemas define the resources: a
// Chassis linking its EnvironmentMetrics (v1_3) and its deprecated Power
// (v1_7), behind basic authentication. watts is the power it reports.
func redfishBMC(t testing.TB, watts *atomic.Int64, env bool) *httptest.Server {
	t.Helper()
	chassis := map[string]any{
		"@odata.type": "#Chassis.v1_23_0.Chassis", "@odata.id": "/redfish/v1/Chassis/1U", "Id": "1U", "Name": "Computer System Chassis",
		"ChassisType": "RackMount", "Power": map[string]string{"@odata.id": "/redfish/v1/Chassis/1U/Power"},
	}
	if env {
		chassis["EnvironmentMetrics"] = map[string]string{"@odata.id": "/redfish/v1/Chassis/1U/EnvironmentMetrics"}
	}
	mux := http.NewServeMux()
	serve := func(path string, doc func() any) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "s3cret" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(doc())
		})
	}
	serve("/redfish/v1/Chassis/1U", func() any { return chassis })
	serve("/redfish/v1/Chassis/1U/EnvironmentMetrics", func() any {
		return map[string]any{"@odata.type": "#EnvironmentMetrics.v1_3_0.EnvironmentMetrics", "@odata.id": "/redfish/v1/Chassis/1U/EnvironmentMetrics",
			"Id": "EnvironmentMetrics", "Name": "Chassis Environment Metrics",
			"TemperatureCelsius": map[string]any{"DataSourceUri": "/redfish/v1/Chassis/1U/Sensors/AmbientTemp", "Reading": 39},
			"PowerWatts":         map[string]any{"DataSourceUri": "/redfish/v1/Chassis/1U/Sensors/TotalPower", "Reading": watts.Load()},
			"EnergykWh":          map[string]any{"DataSourceUri": "/redfish/v1/Chassis/1U/Sensors/TotalEnergy", "Reading": 36166}}
	})
	serve("/redfish/v1/Chassis/1U/Power", func() any {
		return map[string]any{"@odata.type": "#Power.v1_7_1.Power", "@odata.id": "/redfish/v1/Chassis/1U/Power", "Id": "Power", "Name": "Power",
			"PowerControl": []any{
				map[string]any{"@odata.id": "/redfish/v1/Chassis/1U/Power#/PowerControl/0", "MemberId": "0", "Name": "Server Power Control",
					"PowerConsumedWatts": watts.Load(), "PowerCapacityWatts": 800,
					"PowerMetrics": map[string]any{"IntervalInMin": 30, "MinConsumedWatts": 271, "MaxConsumedWatts": 489, "AverageConsumedWatts": 319}},
				map[string]any{"MemberId": "1", "Name": "Unmetered", "PowerConsumedWatts": nil}}}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Over a real socket: a Chassis with EnvironmentMetrics is read through
// it, one without through Power; the password never reaches the spec.
func TestRedfish(t *testing.T) {
	var watts atomic.Int64
	watts.Store(374)
	for _, c := range []struct {
		name string
		env  bool
		want []Reading
		note string
	}{
		{"EnvironmentMetrics.PowerWatts", true, []Reading{{Node: "n", Device: "chassis", Kind: Power, Value: 374}}, "EnvironmentMetrics"},
		{"Power.PowerControl, the null entry left out", false, []Reading{{Node: "n", Device: "power-control-0", Kind: Power, Value: 374}}, "deprecated"},
	} {
		srv := redfishBMC(t, &watts, c.env)
		url := strings.Replace(srv.URL, "http://", "http://admin:s3cret@", 1) + "/redfish/v1/Chassis/1U"
		r, err := OpenRedfish(url, "n")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if strings.Contains(r.Spec(), "s3cret") || !strings.Contains(strings.Join(r.Notes(), " "), c.note) {
			t.Errorf("%s: spec %q, notes %q", c.name, r.Spec(), r.Notes())
		}
		rs, err := r.Poll(context.Background())
		if err != nil || !reflect.DeepEqual(rs, c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.name, rs, err, c.want)
		}
	}
	// Wrong credentials fail at open, naming the status.
	srv := redfishBMC(t, &watts, true)
	if _, err := OpenRedfish(strings.Replace(srv.URL, "http://", "http://admin:wrong@", 1)+"/redfish/v1/Chassis/1U", ""); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong password: %v", err)
	}
	// A lying BMC: a negative power is an error, not a reading.
	watts.Store(-5)
	r, err := OpenRedfish(strings.Replace(srv.URL, "http://", "http://admin:s3cret@", 1)+"/redfish/v1/Chassis/1U/EnvironmentMetrics", "")
	if err == nil || !strings.Contains(err.Error(), "PowerWatts.Reading -5") {
		t.Errorf("a negative reading: %v, %v", r, err)
	}
	for _, bad := range []string{"ftp://bmc/redfish", "http://bmc/redfish#tls=off", "bmc"} {
		if _, err := OpenRedfish(bad, ""); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A BMC that stops answering leaves each read to its timeout: the
// Sampler records gaps, no reading, and stops without hanging.
func TestRedfishTimeout(t *testing.T) {
	var watts atomic.Int64
	watts.Store(300)
	bmc := redfishBMC(t, &watts, true)
	r, err := OpenRedfish(strings.Replace(bmc.URL, "http://", "http://admin:s3cret@", 1)+"/redfish/v1/Chassis/1U", "")
	if err != nil {
		t.Fatal(err)
	}
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer stalled.Close()
	r.resource = stalled.URL + "/redfish/v1/Chassis/1U/EnvironmentMetrics"
	s := Start(time.Now(), []Source{r}, Options{Period: 100 * time.Millisecond})
	time.Sleep(350 * time.Millisecond)
	start := time.Now()
	l, err := s.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Readings) != 0 || len(l.Gaps) == 0 || time.Since(start) > 2*time.Second {
		t.Errorf("%d readings, %d gaps, stopped in %v: want gaps only, promptly", len(l.Readings), len(l.Gaps), time.Since(start))
	}
}

// The Redfish parsers never panic and return only readings the Log
// accepts.
func FuzzParseRedfish(f *testing.F) {
	f.Add([]byte(`{"PowerWatts":{"Reading":374.5},"EnergykWh":{"Reading":36166}}`))
	f.Add([]byte(`{"PowerControl":[{"MemberId":"0","PowerConsumedWatts":344},{"PowerConsumedWatts":null}]}`))
	f.Add([]byte(`{"PowerWatts":{"Reading":null},"EnergykWh":{"Reading":-1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var doc map[string]json.RawMessage
		if json.Unmarshal(b, &doc) != nil {
			return
		}
		for _, parse := range []func(map[string]json.RawMessage, string) ([]Reading, error){parseEnvironmentMetrics, parsePowerControl} {
			rs, err := parse(doc, "")
			if err != nil {
				continue
			}
			if len(rs) == 0 {
				t.Fatal("no error and no reading")
			}
			for _, r := range rs {
				if err := r.check(); err != nil {
					t.Fatalf("%+v: %v", r, err)
				}
			}
		}
	})
}

// A BMC whose EnvironmentMetrics gives EnergykWh only (no PowerWatts), or
// PowerWatts only, each as the test sets it; nil is null.
func redfishEnergyBMC(t testing.TB) (*httptest.Server, func(kwh, watts any)) {
	t.Helper()
	var mu sync.Mutex
	var kwh, watts any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		doc := map[string]any{"@odata.type": "#EnvironmentMetrics.v1_3_0.EnvironmentMetrics", "Id": "EnvironmentMetrics"}
		if kwh != nil {
			doc["EnergykWh"] = map[string]any{"DataSourceUri": "/redfish/v1/Chassis/1U/Sensors/TotalEnergy", "Reading": kwh}
		}
		if watts != nil {
			doc["PowerWatts"] = map[string]any{"DataSourceUri": "/redfish/v1/Chassis/1U/Sensors/TotalPower", "Reading": watts}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)
	return srv, func(k, w any) { mu.Lock(); kwh, watts = k, w; mu.Unlock() }
}

// EnergykWh over a real socket, read at 0 and 1 s of the source's clock:
// the schema gives the counter no wrap, so any drop is a reset. Each row
// works out the joules counted and the gap.
func TestRedfishEnergyCounterSteps(t *testing.T) {
	tests := []struct {
		why         string
		first, then float64 // kWh at the reads at 0 and 1 s
		counted     float64 // J counted at the second read
		gap         string  // "" for none
	}{
		{"a rise of 0.0001 kWh in 1 s is 360 J, 360 W: counted", 36166, 36166.0001, 360, ""},
		{"no wrap: a drop to 0 after ResetMetrics is a reset, not counted", 36166, 0, 0, "a reset: it does not wrap"},
		{"a backwards step of 0.001 kWh (3.6 kJ) is a reset too", 36166, 36165.999, 0, "went down from 130197600000.0 to 130197596400.0 J"},
		{"a jump of 1 kWh in 1 s (3.6 MW) is above the ceiling of 100 kW", 36166, 36167, 0, "jumped by 3600000.0 J in 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			srv, set := redfishEnergyBMC(t)
			set(tt.first, nil)
			clock := time.Unix(1795586400, 0)
			r, err := OpenRedfish(srv.URL+"/redfish/v1/Chassis/1U/EnvironmentMetrics", "n1")
			if err != nil {
				t.Fatal(err)
			}
			r.now = func() time.Time { return clock }
			r.counted = counter{} // the read at open was on the real clock: start again at 0 s
			if rs, err := r.Poll(context.Background()); err != nil || len(rs) != 1 || rs[0].Kind != Energy || rs[0].Value != 0 {
				t.Fatalf("first read %+v, %v: want 0 J counted", rs, err)
			}
			set(tt.then, nil)
			clock = clock.Add(time.Second)
			rs, err := r.Poll(context.Background())
			gaps, rest := splitGaps(err)
			// kWh in float64: 36166.0001 kWh is 360 J above 36166 to within 2e-5 J.
			if rest != nil || len(rs) != 1 || math.Abs(rs[0].Value-tt.counted) > 1e-3 {
				t.Fatalf("second read %+v, %v: want %v J counted", rs, err, tt.counted)
			}
			if tt.gap == "" && len(gaps) != 0 || tt.gap != "" && (len(gaps) != 1 || gaps[0].Device != "chassis" || gaps[0].Kind != Energy ||
				!strings.Contains(gaps[0].Reason, tt.gap)) {
				t.Errorf("gaps %+v, want %q", gaps, tt.gap)
			}
		})
	}
}

// PowerWatts above the ceiling (a BMC's sensor reading in mW, or garbage)
// is left out by the Sampler's screen, with a gap from the reading before
// to the one after; with SpecOptions.MaxPowerW the ceiling is the one
// configured, and a PowerControl's PowerCapacityWatts × 1.5 where the BMC
// gives one.
func TestRedfishAbsurdPower(t *testing.T) {
	tests := []struct {
		why     string
		maxW    float64 // SpecOptions.MaxPowerW
		watts   float64 // the reading at 1 s, between 450 W at 0 and 2 s
		leftOut bool
		power   bool // read through the deprecated Power resource, whose PowerCapacityWatts is 800 W
	}{
		{"450,000,000 W (a reading in mW read as W) is above 100 kW", 0, 450e6, true, false},
		{"100 kW exactly is kept: the ceiling is not above itself", 0, 100e3, false, false},
		{"with a ceiling of 2 kW configured, 2.5 kW is left out", 2000, 2500, true, false},
		{"the Power resource's PowerCapacityWatts of 800 W makes the ceiling 1200 W: 1500 W is left out", 0, 1500, true, true},
		{"and 1200 W is kept", 0, 1200, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			srv, set := redfishEnergyBMC(t)
			set(nil, 450)
			spec := "redfish:" + srv.URL + "/redfish/v1/Chassis/1U/EnvironmentMetrics"
			var watts atomic.Int64
			if tt.power {
				spec = "redfish:" + strings.Replace(redfishBMC(t, &watts, false).URL, "://", "://admin:s3cret@", 1) + "/redfish/v1/Chassis/1U"
			}
			srcs, err := Open(spec, SpecOptions{MaxPowerW: tt.maxW})
			if err != nil {
				t.Fatal(err)
			}
			r := srcs[0].(*Redfish)
			s := &Sampler{}
			for i, w := range []float64{450, tt.watts, 450} {
				set(nil, w)
				watts.Store(int64(w))
				rs, err := r.Poll(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for j := range rs {
					rs[j].T, rs[j].Source = int64(i)*sec, "redfish"
				}
				s.keep(&s.screen, r, rs, nil, int64(i)*sec)
			}
			if !tt.leftOut {
				if len(s.readings) != 3 || len(s.gaps) != 0 {
					t.Errorf("readings %+v, gaps %+v: want all three kept", s.readings, s.gaps)
				}
				return
			}
			if len(s.readings) != 2 || len(s.gaps) != 1 || s.gaps[0].T != 0 || s.gaps[0].DurationNs != 2*sec ||
				s.gaps[0].Device != s.readings[0].Device || s.gaps[0].Kind != Power || !strings.Contains(s.gaps[0].Reason, "above the ceiling") {
				t.Errorf("readings %+v, gaps %+v: want the 1 s reading left out, a gap from 0 to 2 s", s.readings, s.gaps)
			}
		})
	}
}
