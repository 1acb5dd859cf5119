package store_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"strings"
	"testing"

	"aimeter/store"
)

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{3, "3"}, {-12, "-12"}, {1.5, "1.5"}, {1234567.8, "1.23457e+06"}, {1e16, "1e+16"}, {math.Inf(1), "+Inf"}, {math.NaN(), "NaN"}} {
		if got := store.FormatValue(tc.in); got != tc.want {
			t.Errorf("FormatValue(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCheckString(t *testing.T) {
	judged := store.Check{Threshold: store.Threshold{Test: store.Percent, Metric: "headline", Limit: 5}, RunID: 3, Baseline: []int64{2}, Value: 90, BaselineValue: 100, Change: -10, Judged: true, Regressed: true}
	if got, want := judged.String(), "percent headline: REGRESSION run 3: 90 against 100 of runs [2] (-10.00 %, limit 5 %)"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	not := store.Check{Threshold: store.Threshold{Test: store.ZScore, Metric: "latency_ns.p99"}, Note: "2 earlier runs, want 3"}
	if got, want := not.String(), "zscore latency_ns.p99: not judged: 2 earlier runs, want 3 "; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestCompareAndViews records two bundles and reads them back through
// Compare, Detail and the text and CSV writers.
func TestCompareAndViews(t *testing.T) {
	dir := makeBundle(t, 0)
	forEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.Compare(ctx, nil, nil); !errors.Is(err, store.ErrNoRuns) {
			t.Fatalf("Compare of an empty store: %v, want ErrNoRuns", err)
		}
		a := must[*store.Run](t)(store.RecordBundle(ctx, s, dir))
		b := must[*store.Run](t)(s.Ingest(ctx, dir, store.IngestOptions{Source: "again"}))

		var nf *store.RunNotFoundError
		if _, err := s.Compare(ctx, []int64{a.ID, 999}, nil); !errors.As(err, &nf) || nf.ID != 999 || !errors.Is(err, store.ErrNotFound) || err.Error() != "no run 999 in the results store" {
			t.Fatalf("Compare with a missing run: %v", err)
		}

		latest := must[*store.Comparison](t)(s.Compare(ctx, nil, nil))
		if latest.Candidate.ID != b.ID || len(latest.Runs) != 2 || latest.Runs[1].Run.ID != b.ID || latest.Runs[0].Run.ID != a.ID {
			t.Fatalf("Compare of the newest: candidate %d, runs %v", latest.Candidate.ID, latest.Runs)
		}
		if len(latest.Checks) == 0 || latest.Checks[0].Threshold.Metric != "headline" {
			t.Fatalf("checks %+v, want the default headline threshold", latest.Checks)
		}
		named := must[*store.Comparison](t)(s.Compare(ctx, []int64{b.ID, a.ID}, []store.Threshold{{Test: store.Percent, Metric: "samples.ok"}}))
		if named.Candidate.ID != b.ID || named.Checks[0].Threshold.Lookback != 1 || named.Checks[0].Threshold.Metric != "samples.ok" || len(named.OtherSeries) != 0 {
			t.Fatalf("Compare of two named runs: %+v", named)
		}
		if named.Regressed != store.Regressed(named.Checks) || named.Regressed {
			t.Errorf("the same bundle twice regressed: %+v", named.Checks)
		}
		var out bytes.Buffer
		if err := named.WriteComparison(&out); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"run", "verdict", "samples.ok", "latency stddev", "percent samples.ok: ok run"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("comparison lacks %q:\n%s", want, out.String())
			}
		}

		d := must[*store.RunDetail](t)(s.Detail(ctx, *a))
		if len(d.Metrics) == 0 || len(d.Artifacts) == 0 {
			t.Fatalf("detail without metrics or files: %+v", d)
		}
		out.Reset()
		if err := s.WriteDetail(&out, d); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{a.HeadlineText(), "\nmetrics:\n", "\nfiles:\n", "\nevents:\n", "sha256:" + a.BundleDigest} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("detail lacks %q:\n%s", want, out.String())
			}
		}

		list := must[[]store.RunDetail](t)(s.WithMetricList(ctx, []store.Run{*a}))
		out.Reset()
		if err := store.WriteCSV(&out, list); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(rows[0], ",") != store.CSVHeader || len(rows) != 1+len(list[0].Metrics) {
			t.Errorf("CSV: header %v and %d rows, want %d metrics", rows[0], len(rows)-1, len(list[0].Metrics))
		}
		if empty := must[[]store.RunDetail](t)(s.WithMetricList(ctx, nil)); empty == nil {
			t.Error("WithMetricList(nil) is nil; want an empty list (export --format json prints [])")
		}
		if lean := store.WithoutDocuments([]store.Run{*a}); lean[0].Result != nil || a.Result == nil {
			t.Error("WithoutDocuments kept the result, or cleared the caller's")
		}
	})
}
