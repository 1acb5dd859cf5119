package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// shapesServer is a KServe v2 HTTP server of one model "dyn" whose input X
// is FP32 [-1, -1] and output Y FP32 [-1, 1]: it answers every request
// with the row sums of X, and counts the inference requests.
func shapesServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var infers atomic.Int64
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }
	mux.HandleFunc("GET /v2/health/live", ok)
	mux.HandleFunc("GET /v2/health/ready", ok)
	mux.HandleFunc("GET /v2/models/dyn/ready", ok)
	mux.HandleFunc("GET /v2/models/dyn", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"name":"dyn","inputs":[{"name":"X","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"Y","datatype":"FP32","shape":[-1,1]}]}`))
	})
	mux.HandleFunc("POST /v2/models/dyn/infer", func(w http.ResponseWriter, r *http.Request) {
		infers.Add(1)
		var req struct {
			Inputs []struct {
				Shape []int64   `json:"shape"`
				Data  []float64 `json:"data"`
			} `json:"inputs"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Inputs) != 1 || len(req.Inputs[0].Shape) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		n, m := req.Inputs[0].Shape[0], req.Inputs[0].Shape[1]
		sums := make([]float64, n)
		for i := range sums {
			for _, v := range req.Inputs[0].Data[int64(i)*m : int64(i+1)*m] {
				sums[i] += v
			}
		}
		b, _ := json.Marshal(map[string]any{"model_name": "dyn", "outputs": []map[string]any{{"name": "Y", "datatype": "FP32", "shape": []int64{n, 1}, "data": sums}}})
		_, _ = w.Write(b)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &infers
}

// TestKServeOwnInputs: --sut kserve of a model that is not the reference
// model refuses a dynamic dimension without --shape before the run (no
// request sent), and with --shape and --batch-size runs --qsl-size
// samples of the model's own inputs, every one ok.
func TestKServeOwnInputs(t *testing.T) {
	srv, infers := shapesServer(t)
	wd := t.TempDir()
	base := []string{"run", "--sut", "kserve", "--url", srv.URL, "--model-name", "dyn", "--scenario", "Offline", "-q"}
	res := runCLI(t, wd, append(base, "--output-dir", filepath.Join(wd, "a"))...)
	if res.code == ExitOK || !strings.Contains(res.stderr+res.stdout, `input "X" has the dynamic dimension 1`) || !strings.Contains(res.stderr+res.stdout, "--shape X:") {
		t.Fatalf("no --shape: want a refusal naming X: %s", res)
	}
	if infers.Load() != 0 {
		t.Fatalf("%d requests sent before the refusal", infers.Load())
	}
	res = runCLI(t, wd, append(base, "--output-dir", filepath.Join(wd, "b"), "--shape", "X:3", "--batch-size", "2", "--qsl-size", "16",
		"--input-data-seed", "5", "--set", "min_query_count=64", "--set", "min_duration=0")...)
	if res.code != ExitOK {
		t.Fatalf("with --shape: %s", res)
	}
	recs := readRecordsT(t, filepath.Join(wd, "b"))
	if len(recs) < 64 || infers.Load() < 64 {
		t.Fatalf("%d records, %d requests: want at least 64", len(recs), infers.Load())
	}
	for _, r := range recs {
		if r.Error != 0 {
			t.Fatalf("a failed sample: %+v\n%s", r, res)
		}
	}
}
