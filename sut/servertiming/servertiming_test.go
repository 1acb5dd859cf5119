package servertiming

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"aimeter/loadgen"
)

// stm builds an expected metric: dur < 0 means no dur, desc "\x00" no desc.
func stm(name string, dur float64, desc string) Metric {
	m := Metric{Name: name}
	if dur >= 0 {
		m.Dur, m.HasDur = dur, true
	}
	if desc != "\x00" {
		m.Desc, m.HasDesc = desc, true
	}
	return m
}

const noDesc = "\x00"

func TestParse(t *testing.T) {
	rows := []struct {
		why       string
		in        []string
		want      []Metric
		malformed int
	}{
		{"one metric with a duration", []string{"aimeter-inference;dur=12.5"},
			[]Metric{stm("aimeter-inference", 12.5, noDesc)}, 0},
		{"OWS around ; and = and the comma (W3C grammar)", []string{" a ; dur = 1 ; desc = \"x y\" ,\tb;dur=2 "},
			[]Metric{stm("a", 1, "x y"), stm("b", 2, noDesc)}, 0},
		{"quoted-pair escapes in desc", []string{`a;desc="say \"hi\" \\ ok"`},
			[]Metric{stm("a", -1, `say "hi" \ ok`)}, 0},
		{"desc as a token", []string{"cache;desc=hit"},
			[]Metric{stm("cache", -1, "hit")}, 0},
		{"a bare name is a metric without dur", []string{"miss"},
			[]Metric{stm("miss", -1, noDesc)}, 0},
		{"the first of repeated dur and desc counts", []string{"a;dur=1;dur=2;desc=x;desc=y"},
			[]Metric{stm("a", 1, "x")}, 0},
		{"dur as a quoted-string", []string{`a;dur="3.5"`},
			[]Metric{stm("a", 3.5, noDesc)}, 0},
		{"parameter names are case-insensitive", []string{"a;DUR=4;Desc=z"},
			[]Metric{stm("a", 4, "z")}, 0},
		{"unknown parameters are ignored", []string{"a;foo=bar;dur=1"},
			[]Metric{stm("a", 1, noDesc)}, 0},
		{"empty list elements are allowed (#rule)", []string{", ,a;dur=1,"},
			[]Metric{stm("a", 1, noDesc)}, 0},
		{"a comma inside a quoted desc does not split", []string{`a;desc="x,y";dur=1, b`},
			[]Metric{stm("a", 1, "x,y"), stm("b", -1, noDesc)}, 0},
		{"decimal forms: .5, 5., 1e3, 1E-3, +2", []string{"a;dur=.5, b;dur=5., c;dur=1e3, d;dur=1E-3, e;dur=+2"},
			[]Metric{stm("a", .5, noDesc), stm("b", 5, noDesc), stm("c", 1000, noDesc), stm("d", 0.001, noDesc), stm("e", 2, noDesc)}, 0},
		{"several header lines", []string{"a;dur=1", "b;dur=2"},
			[]Metric{stm("a", 1, noDesc), stm("b", 2, noDesc)}, 0},
		{"empty header", []string{""}, nil, 0},

		{"dur not a number: that metric only is dropped", []string{"a;dur=abc, b;dur=2"},
			[]Metric{stm("b", 2, noDesc)}, 1},
		{"negative dur is malformed", []string{"a;dur=-1"}, nil, 1},
		{"hex, Inf, NaN and overflowing durations are malformed", []string{"a;dur=0x10, b;dur=Inf, c;dur=NaN, d;dur=1e400, e;dur=1e"}, nil, 5},
		{"unterminated quoted string: the rest cannot be split", []string{`a;desc="x, b;dur=1`}, nil, 1},
		{"a quoted name is not a token", []string{`"a";dur=1, b`},
			[]Metric{stm("b", -1, noDesc)}, 1},
		{"parameter without value", []string{"a;dur, b;dur=1"},
			[]Metric{stm("b", 1, noDesc)}, 1},
		{"dangling semicolon", []string{"a;"}, nil, 1},
		{"garbage after the metric", []string{"a;dur=1 junk, b;dur=2"},
			[]Metric{stm("b", 2, noDesc)}, 1},
		{"control character in a quoted desc", []string{"a;desc=\"x\x01\", b;dur=3"},
			[]Metric{stm("b", 3, noDesc)}, 1},
		{"bad escape at the end of the value", []string{`a;desc="x\`}, nil, 1},
		{"a malformed line does not spoil the next line", []string{"a;dur=", "b;dur=7"},
			[]Metric{stm("b", 7, noDesc)}, 1},
	}
	for _, row := range rows {
		got, bad := Parse(row.in...)
		if !reflect.DeepEqual(got, row.want) || bad != row.malformed {
			t.Errorf("%s: Parse(%q) =\n %+v, %d malformed\nwant\n %+v, %d", row.why, row.in, got, bad, row.want, row.malformed)
		}
	}
}

func TestFormat(t *testing.T) {
	ms := []Metric{stm("a", 1.25, `q"\`), stm("b", -1, noDesc), stm("c", 1e-7, "")}
	got := Format(ms)
	if want := `a;dur=1.25;desc="q\"\\", b, c;dur=1e-07;desc=""`; got != want {
		t.Errorf("Format = %s, want %s", got, want)
	}
	back, bad := Parse(got)
	if bad != 0 || !reflect.DeepEqual(back, ms) {
		t.Errorf("round trip: %+v, %d malformed", back, bad)
	}
}

// TestFromMetrics: durations (ms, W3C) laid out on the SUT clock
// from t_ITR = 0.
func TestFromMetrics(t *testing.T) {
	st := func(recv, preS, preE, infS, infE, postS, postE, sent float64) loadgen.StageTimes {
		t := func(v float64) int64 {
			if v == -1 {
				return loadgen.NoTime
			}
			return int64(math.Round(v * 1e6))
		}
		return loadgen.StageTimes{
			Clock: loadgen.SUTClock, Received: t(recv), PreprocessStart: t(preS), PreprocessEnd: t(preE),
			InferenceStart: t(infS), InferenceEnd: t(infE), PostprocessStart: t(postS), PostprocessEnd: t(postE),
			ResultSent: t(sent),
		}
	}
	rows := []struct {
		why       string
		header    string
		want      loadgen.StageTimes
		malformed int
	}{
		{"every stage: dispatch 1, pre 2, inference 30, post 3 laid end to end; first token at 36.5",
			"aimeter-dispatch;dur=1, aimeter-preprocess;dur=2, aimeter-inference;dur=30, aimeter-postprocess;dur=3, aimeter-first-token;dur=36.5",
			st(0, 1, 3, 3, 33, 33, 36, 36.5), 0},
		{"order in the header does not matter",
			"aimeter-first-token;dur=36.5, aimeter-postprocess;dur=3, aimeter-inference;dur=30, aimeter-preprocess;dur=2, aimeter-dispatch;dur=1",
			st(0, 1, 3, 3, 33, 33, 36, 36.5), 0},
		{"inference only: no pre/post-processing, dispatch taken as 0, no first token",
			"aimeter-inference;dur=30", st(0, -1, -1, 0, 30, -1, -1, -1), 0},
		{"other metrics (a proxy's, a database's) are ignored, not malformed",
			"db;dur=5, cdn-cache;desc=HIT, aimeter-inference;dur=2", st(0, -1, -1, 0, 2, -1, -1, -1), 0},
		{"a repeated aimeter metric: the first counts, the second is malformed",
			"aimeter-inference;dur=2, aimeter-inference;dur=9", st(0, -1, -1, 0, 2, -1, -1, -1), 1},
		{"an aimeter metric without dur is malformed",
			"aimeter-preprocess, aimeter-inference;dur=2", st(0, -1, -1, 0, 2, -1, -1, -1), 1},
		{"a duration above 10^9 ms is malformed",
			"aimeter-inference;dur=1e10", st(0, -1, -1, -1, -1, -1, -1, -1), 1},
		{"a header malformed elsewhere still yields the good metrics",
			"aimeter-dispatch;dur=x, aimeter-inference;dur=4, aimeter-first-token;dur=0.0005",
			st(0, -1, -1, 0, 4, -1, -1, 0.0005), 1},
		{"sub-ns durations round to the nearest ns", "aimeter-inference;dur=0.0000014",
			loadgen.StageTimes{Clock: loadgen.SUTClock, Received: 0, PreprocessStart: -1, PreprocessEnd: -1,
				InferenceStart: 0, InferenceEnd: 1, PostprocessStart: -1, PostprocessEnd: -1, ResultSent: -1}, 0},
		{"nothing reported", "", st(0, -1, -1, -1, -1, -1, -1, -1), 0},
	}
	for _, row := range rows {
		got, bad := ParseStages(row.header)
		if got != row.want || bad != row.malformed {
			t.Errorf("%s:\n got %+v, %d malformed\nwant %+v, %d", row.why, got, bad, row.want, row.malformed)
		}
	}
}

// FuzzParse: no input panics or counts negative; whatever parses
// formats back to a header that parses to the same metrics with nothing
// malformed; the stage conversion never panics and stays on the SUT clock.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"aimeter-inference;dur=12.5",
		`a;desc="x, y";dur=1, b;dur=.5`,
		`a;desc="say \"hi\" \\ ok"`,
		"aimeter-dispatch;dur=1, aimeter-preprocess;dur=2, aimeter-inference;dur=30, aimeter-postprocess;dur=3, aimeter-first-token;dur=36.5",
		`"a";dur=1, b;dur=1e400, c;desc="x`,
		", ,a;DUR=4;Desc=z,",
		"a;dur=1 junk",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, bad := Parse(s)
		if bad < 0 {
			t.Fatalf("negative malformed count %d", bad)
		}
		for _, m := range ms {
			if m.Name == "" || (m.HasDur && !(m.Dur >= 0)) {
				t.Fatalf("parsed an invalid metric %+v", m)
			}
		}
		out := Format(ms)
		back, bad2 := Parse(out)
		if bad2 != 0 || !reflect.DeepEqual(back, ms) {
			t.Fatalf("round trip of %q via %q: %+v (%d malformed), want %+v", s, out, back, bad2, ms)
		}
		st, sbad := FromMetrics(ms)
		if sbad < 0 || st.Clock != loadgen.SUTClock || st.Received != 0 {
			t.Fatalf("stages %+v, %d malformed", st, sbad)
		}
		if st.InferenceEnd != loadgen.NoTime && st.InferenceEnd < st.InferenceStart {
			t.Fatalf("inference ends before it starts: %+v", st)
		}
		if !strings.Contains(out, ",") && len(ms) > 1 {
			t.Fatalf("formatted %d metrics without a comma: %q", len(ms), out)
		}
	})
}
