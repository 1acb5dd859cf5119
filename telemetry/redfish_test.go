package telemetry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
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
