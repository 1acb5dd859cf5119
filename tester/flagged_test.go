package tester_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/internal/bundletest"
	"aimeter/store"
	"aimeter/tester"
)

// With Options.StoreFlagged, a bundle signed with the registered key whose
// claimed p99 the raw records do not support is stored flagged, with the
// difference as its reason, on the API and the dashboard; the recomputed
// p99 is what the store holds.
func TestStoreFlagged(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	dsn := filepath.Join(t.TempDir(), "results.db")
	st, err := store.Open(ctx, store.Options{DSN: dsn, FilesDir: filepath.Join(dataDir, "results")})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := tester.New(tester.Options{Store: st, DataDir: dataDir, StoreFlagged: true})
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, srv, st, dataDir, dsn)
	p := s.register(t, 0, "")
	dir := bundletest.Copy(t, bundletest.MLPerf)
	rewrite(t, dir, bundle.ResultFile, betterP99)
	rep, err := p.client.Submit(ctx, p.reg.TestID, dir, p.key)
	if err != nil {
		t.Fatalf("a flagged bundle was refused: %v", err)
	}
	const claim = "result.json: latency_ns.p99 claimed 1, recomputed"
	if rep.Status != store.StatusFlagged || len(rep.Differences) == 0 || !strings.Contains(strings.Join(rep.Differences, "\n"), claim) {
		t.Fatalf("reply %+v, want flagged naming %q", rep, claim)
	}
	var run tester.RunView
	getJSON(t, s, "/api/v1/runs/"+strconv.FormatInt(rep.RunID, 10), &run)
	if run.Status != store.StatusFlagged || !strings.Contains(run.StatusReason, claim) {
		t.Errorf("API: status %s, reason %q", run.Status, run.StatusReason)
	}
	for _, m := range run.Metrics {
		if m.Name == "latency_ns.p99" && m.Value == 1 {
			t.Error("the store holds the claimed p99, not the recomputed one")
		}
	}
	req, _ := http.NewRequest(http.MethodGet, s.ts.URL+"/runs/"+strconv.FormatInt(rep.RunID, 10), nil)
	req.Header.Set("Authorization", "Bearer "+s.admin)
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), ">flagged<") || !strings.Contains(string(page), "latency_ns.p99 claimed 1") {
		t.Errorf("the dashboard's run page does not show the flag and its reason:\n%s", page)
	}
	var at tester.AuditTrail
	getJSON(t, s, "/api/v1/events?test="+p.reg.TestID, &at)
	last := at.Events[len(at.Events)-1]
	var d struct {
		Status      string   `json:"status"`
		Differences []string `json:"differences"`
	}
	json.Unmarshal(last.Detail, &d)
	if last.Kind != store.EventUploadComplete || d.Status != "flagged" || len(d.Differences) == 0 || !strings.Contains(d.Differences[0], claim) {
		t.Errorf("last event %s %s, want upload_complete flagged with the differences", last.Kind, last.Detail)
	}
}
