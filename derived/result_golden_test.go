package derived

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/internal/golden"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/report"
)

// streamSUT streams each sample's tokens from a timer: 3 to 6 tokens,
// the first after 4 to 8 ms and the next ones 1, 1.5 or 2 ms apart,
// depending on the sample's index; on synctest's fake clock every time is
// exact.
type streamSUT struct{}

func (streamSUT) Name() string { return "streamSUT" }

func (streamSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		n := 3 + int64(q.Index%4)
		first := 4*time.Millisecond + time.Duration(q.Index%5)*time.Millisecond
		gap := time.Millisecond + time.Duration(q.Index%3)*500*time.Microsecond
		time.AfterFunc(first+time.Duration(n-1)*gap, func() {
			done := r.Now()
			times := make([]int64, n)
			for j := range times {
				times[j] = done - (n-1-int64(j))*int64(gap)
			}
			r.Respond(loadgen.Response{ID: q.ID, Data: []byte{1}, Tokens: n, TokenTimes: times})
		})
	}
}

func (streamSUT) FlushQueries() {}

// TestResultGolden checks result.json of a streaming token-latency Server
// run with an SLO, on a fake clock, against testdata (go test ./derived
// -run TestResultGolden -update rewrites it): a change of its bytes is
// one that is meant. It holds every figure of a streamed run: latency,
// tokens, streaming (ITL and E2E), goodput, send lateness and the steady
// state.
func TestResultGolden(t *testing.T) {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Server
	s.ServerTargetQPS = 200
	s.ServerTargetLatencyNs = 50_000_000
	s.MinDurationMs = 1000
	s.MinQueryCount = 100
	s.UseTokenLatencies = true
	s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = 7_000_000, 1_600_000
	var res *loadgen.Result
	synctest.Test(t, func(t *testing.T) {
		var err error
		res, err = loadgen.Run(context.Background(), streamSUT{}, &loadgentest.QSL{Total: 64}, s, &loadgen.Options{SpinWindow: -1}) // sleep, not spin, on the fake clock
		if err != nil {
			t.Fatalf("loadgen.Run: %v", err)
		}
	})
	b := &bundle.Bundle{Result: res, Version: "test"}
	invocation.Set(b, &invocation.Invocation{SLO: &bundle.SLO{TTFTNs: 7_000_000, E2ENs: 12_000_000}})
	r, err := Of(b).Result()
	if err != nil {
		t.Fatal(err)
	}
	if r.Streaming == nil || r.Goodput == nil || r.Steady == nil || r.Tokens == nil {
		t.Fatalf("a streamed token run with an SLO lacks figures: streaming %v, goodput %v, steady %v, tokens %v", r.Streaming, r.Goodput, r.Steady, r.Tokens)
	}
	// Every sample succeeded: the E2E latencies are LoadGen's sample
	// latencies, with the same percentile rule.
	if r.LatencyNs == nil || r.Streaming.E2ENs != *r.LatencyNs {
		t.Errorf("streaming E2E %+v, LoadGen's latencies %+v: want the same", r.Streaming.E2ENs, r.LatencyNs)
	}
	var buf bytes.Buffer
	if err := WriteResult(&buf, r); err != nil {
		t.Fatal(err)
	}
	var back ResultJSON
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("result.json does not read back: %v", err)
	}
	golden.Check(t, "testdata/result.streaming.golden.json", buf.Bytes())

	// report.html shows the same figures as result.json.
	rep, err := Of(b).Report()
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := report.Write(&page, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Inter-token latency (ITL)", html.EscapeString(StatsText(r.Streaming.ITLNs)),
		"End-to-end latency (E2E)", html.EscapeString(StatsText(r.Streaming.E2ENs))} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
