package mllogtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fracStart is a Start with a sub-millisecond part that float64 holds
// exactly (0.375 ms), so that mlperf-logging's float(time_ms) adds no
// rounding to the times the tests compare to 1e-9 minutes.
var fracStart = DefaultStart.Add(123*time.Millisecond + 375*time.Microsecond)

// line is one parsed log line.
type line struct {
	prefix string
	timeMS string // as printed
	rec    struct {
		Namespace string          `json:"namespace"`
		EventType string          `json:"event_type"`
		Key       string          `json:"key"`
		Value     json.RawMessage `json:"value"`
		Metadata  map[string]any  `json:"metadata"`
		TimeMS    json.Number     `json:"time_ms"`
	}
}

var lineRE = regexp.MustCompile(`^(\d+: )?:::MLLOG (\{.*\})$`)

func parseLog(t *testing.T, b []byte) []line {
	t.Helper()
	var lines []line
	for s := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		m := lineRE.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("not an MLLOG line: %q", s)
		}
		var l line
		l.prefix = m[1]
		d := json.NewDecoder(strings.NewReader(m[2]))
		d.UseNumber()
		if err := d.Decode(&l.rec); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		l.timeMS = l.rec.TimeMS.String()
		lines = append(lines, l)
	}
	return lines
}

// usOf is time_ms in microseconds, read as a decimal (not a float).
func usOf(t *testing.T, s string) int64 {
	t.Helper()
	ms, frac, _ := strings.Cut(s, ".")
	v, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || len(frac) > 3 {
		t.Fatalf("time_ms %q", s)
	}
	f, _ := strconv.ParseInt((frac + "000")[:3], 10, 64)
	return v*1000 + f
}

func write(t *testing.T, spec LogSpec) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteLog(&b, spec); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestWriteLogDeterministic(t *testing.T) {
	specs := []LogSpec{
		{Benchmark: "resnet", TimeToTrain: 30 * time.Minute, Converged: true},
		{Benchmark: "resnet", TimeToTrain: 30 * time.Minute, Ranks: 4, RankSkew: 2 * time.Millisecond},
		{Benchmark: "llama2_70b_lora", Start: fracStart, TimeToTrain: 17*time.Minute + 250*time.Microsecond, Fractional: true, Converged: true},
		{Benchmark: "llama2_70b_lora", TimeToTrain: time.Hour, Evals: 11, Converged: true},
	}
	seen := map[string]int{}
	for i, spec := range specs {
		a, b := write(t, spec), write(t, spec)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("spec %d: two writes differ or are empty (%d and %d bytes)", i, len(a), len(b))
		}
		if j, ok := seen[string(a)]; ok {
			t.Errorf("specs %d and %d wrote the same log", j, i)
		}
		seen[string(a)] = i
	}
}

func TestWriteLogShape(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		spec         LogSpec
		lines        int // records × ranks
		lastAccuracy string
	}{
		{"resnet", "defaults: 4 evaluations, whole milliseconds, one rank",
			LogSpec{Benchmark: "resnet", TimeToTrain: 30 * time.Minute, Converged: true}, 23 + 5*4, "0.76"},
		{"resnet-aborted", "a run that never converges stops aborted below the target",
			LogSpec{Benchmark: "resnet", TimeToTrain: 30 * time.Minute}, 23 + 5*4, "0.755"},
		{"llama-ranks", "every record once per rank, prefixed, rank r r×RankSkew later",
			LogSpec{Benchmark: "llama2_70b_lora", TimeToTrain: 20 * time.Minute, Converged: true, Ranks: 3, RankSkew: 5 * time.Millisecond, Evals: 2}, 3 * (20 + 5*2), "0.924"},
		{"llama-fractional", "time_ms to the microsecond",
			LogSpec{Benchmark: "llama2_70b_lora", Start: fracStart, TimeToTrain: 20*time.Minute + 1250*time.Microsecond, Fractional: true, Evals: 1}, 20 + 5, "0.928"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := parseLog(t, write(t, tc.spec))
			if len(lines) != tc.lines {
				t.Fatalf("%d lines, want %d (%s)", len(lines), tc.lines, tc.reason)
			}
			ranks := max(tc.spec.Ranks, 1)
			start := tc.spec.Start
			if start.IsZero() {
				start = DefaultStart
			}
			times := map[string][]int64{} // key → time of each rank's line
			var lastAcc string
			for i, l := range lines {
				rank := i % ranks
				if want := fmt.Sprintf("%d: ", rank); (ranks > 1) != (l.prefix == want) || (ranks == 1 && l.prefix != "") {
					t.Fatalf("line %d: prefix %q, want rank %d's (%s)", i, l.prefix, rank, tc.reason)
				}
				if strings.Contains(l.timeMS, ".") != tc.spec.Fractional {
					t.Fatalf("line %d: time_ms %s, Fractional %t", i, l.timeMS, tc.spec.Fractional)
				}
				us := usOf(t, l.timeMS) - int64(rank)*tc.spec.RankSkew.Microseconds()
				times[l.rec.Key] = append(times[l.rec.Key], us)
				if l.rec.Key == "eval_accuracy" {
					lastAcc = string(l.rec.Value)
				}
				if l.rec.Key == "run_stop" {
					want := "success"
					if !tc.spec.Converged {
						want = "aborted"
					}
					if l.rec.Metadata["status"] != want {
						t.Errorf("run_stop status %v, want %s", l.rec.Metadata["status"], want)
					}
				}
			}
			if got := usOf(t, lines[0].timeMS); got != start.UnixMicro() {
				t.Errorf("first time_ms %s, want Start %d µs", lines[0].timeMS, start.UnixMicro())
			}
			for r := range ranks {
				if got := times["run_stop"][r] - times["run_start"][r]; got != tc.spec.TimeToTrain.Microseconds() {
					t.Errorf("rank %d: run_stop − run_start = %d µs, want TimeToTrain %d", r, got, tc.spec.TimeToTrain.Microseconds())
				}
			}
			if lastAcc != tc.lastAccuracy {
				t.Errorf("last eval_accuracy %s, want %s", lastAcc, tc.lastAccuracy)
			}
		})
	}
}

func TestWriteLogErrors(t *testing.T) {
	for _, tc := range []struct {
		reason string
		spec   LogSpec
		want   string
	}{
		{"unknown benchmark", LogSpec{Benchmark: "bert", TimeToTrain: time.Minute}, `benchmark "bert"`},
		{"no time to train", LogSpec{Benchmark: "resnet"}, "TimeToTrain"},
		{"sub-millisecond time without Fractional", LogSpec{Benchmark: "resnet", TimeToTrain: time.Minute + time.Microsecond}, "whole milliseconds"},
		{"sub-microsecond time with Fractional", LogSpec{Benchmark: "resnet", Start: DefaultStart.Add(1), TimeToTrain: time.Minute, Fractional: true}, "whole microseconds"},
		{"negative ranks", LogSpec{Benchmark: "resnet", TimeToTrain: time.Minute, Ranks: -1}, "Ranks"},
	} {
		if err := WriteLog(&bytes.Buffer{}, tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.reason, err, tc.want)
		}
	}
}

func TestParseScore(t *testing.T) {
	out := `mllogtest: patched compute_score: _compute_strong_score_standalone returns 5 values, compute_score unpacks 4
Compliance check failed in /x/y/result_4.txt
NOTICE: Dropping non-converged run(s) for None None/resnet using olympic scoring.
Score - Time to Train (minutes) for /x/y/result_2.txt: 20.000004166666665. Samples/Epochs to converge: 16
Score - Time to Train (minutes) for /x/y/result_0.txt: 1e-05. Samples/Epochs to converge: 3072
WARNING: Olympic scoring skipped
Final score - Time to Train (minutes): 31.25
`
	s, err := parseScore(out)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Patched || !s.OlympicSkipped || s.Final == nil || *s.Final != 31.25 ||
		len(s.PerFile) != 2 || s.PerFile["result_2.txt"] != 20.000004166666665 || s.PerFile["result_0.txt"] != 1e-05 ||
		s.Dropped["result_4.txt"] != "Compliance check failed" || len(s.Dropped) != 1 {
		t.Errorf("parsed %+v", s)
	}
	s, err = parseScore("Final score - Time to Train (minutes): None\n")
	if err != nil || s.Final != nil || s.Patched {
		t.Errorf("None: parsed %+v, %v", s, err)
	}
}

// onlyConvergenceFailed reports whether the compliance checker's output
// has the failed target-accuracy check and no other error.
func onlyConvergenceFailed(out string) bool {
	if strings.Count(out, "Failed checks for ") != 1 || !strings.Contains(out, "Failed checks for eval_accuracy") {
		return false
	}
	for _, bad := range []string{"CHECK for", "Failed executing", "parsing errors", "AT_LEAST_ONE occurrence", "with different values", "Could not find config", "found 0"} {
		if strings.Contains(out, bad) {
			return false
		}
	}
	return true
}

func TestCompliance(t *testing.T) {
	py := Python(t)
	for _, tc := range []struct {
		name, reason string
		spec         LogSpec // Converged is set both ways
	}{
		{"resnet", "one rank, whole milliseconds, 4 evaluations keyed by epoch_num",
			LogSpec{Benchmark: "resnet", TimeToTrain: 30 * time.Minute}},
		{"llama2_70b_lora", "one rank, evaluations keyed by samples_count, a loss target",
			LogSpec{Benchmark: "llama2_70b_lora", TimeToTrain: 25 * time.Minute}},
		{"resnet-8-ranks", "srun --label prefixes and 8 copies of each record: EXACTLY_ONE keys only warn",
			LogSpec{Benchmark: "resnet", TimeToTrain: 30 * time.Minute, Ranks: 8, RankSkew: 3 * time.Millisecond}},
		{"llama2_70b_lora-fractional-ranks", "fractional time_ms and 2 ranks together",
			LogSpec{Benchmark: "llama2_70b_lora", Start: fracStart, TimeToTrain: 25*time.Minute + 125*time.Microsecond, Fractional: true, Ranks: 2}},
		{"resnet-one-eval", "a single evaluation that converges at once",
			LogSpec{Benchmark: "resnet", TimeToTrain: 5 * time.Minute, Evals: 1}},
		{"llama2_70b_lora-long-init", "init_start → init_stop 29 minutes, under the closed division's 30",
			LogSpec{Benchmark: "llama2_70b_lora", TimeToTrain: 25 * time.Minute, InitDuration: 29 * time.Minute}},
	} {
		for _, converged := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/converged=%t", tc.name, converged), func(t *testing.T) {
				t.Parallel()
				spec := tc.spec
				spec.Converged = converged
				file := filepath.Join(t.TempDir(), "result_0.txt")
				if err := os.WriteFile(file, write(t, spec), 0o644); err != nil {
					t.Fatal(err)
				}
				ok, out, err := CheckCompliance(py, file, "4.0.0")
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case converged && !ok:
					t.Errorf("converged log failed (%s):\n%s", tc.reason, out)
				case !converged && ok:
					t.Errorf("non-converged log passed (%s):\n%s", tc.reason, out)
				case !converged && !onlyConvergenceFailed(out):
					t.Errorf("non-converged log failed on more than convergence (%s):\n%s", tc.reason, out)
				case spec.Ranks > 1 && !strings.Contains(out, fmt.Sprintf("Required EXACTLY_ONE occurrence of 'run_start' but found %d", spec.Ranks)):
					t.Errorf("%d-rank log: no warning that run_start occurs %d times:\n%s", spec.Ranks, spec.Ranks, out)
				}
			})
		}
	}
}

// olympic is the olympic average of the converged times (minutes) of a set
// with dropped non-converged runs, as MLPerf Training scores it: sort, drop
// the fastest, drop the slowest unless a non-converged run already counts as
// the dropped slowest, average the rest.
func olympic(converged []float64, dropped int) float64 {
	s := append([]float64{}, converged...)
	sort.Float64s(s)
	s = s[1 : len(s)-(1-dropped)]
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	return sum / float64(len(s))
}

func TestComputeScore(t *testing.T) {
	py := Python(t)
	resnet := func(ttt time.Duration, converged bool) LogSpec {
		return LogSpec{Benchmark: "resnet", TimeToTrain: ttt, Converged: converged}
	}
	llama := func(ttt time.Duration, converged bool) LogSpec {
		return LogSpec{Benchmark: "llama2_70b_lora", TimeToTrain: ttt, Converged: converged}
	}
	// The brief's set: 5 resnet logs, one non-converged, one multi-rank,
	// one with fractional time_ms.
	five := []LogSpec{
		resnet(28*time.Minute+12*time.Second, true),
		{Benchmark: "resnet", Start: DefaultStart.Add(time.Hour), TimeToTrain: 31*time.Minute + 4*time.Second, Converged: true, Ranks: 4},
		{Benchmark: "resnet", Start: fracStart, TimeToTrain: 29*time.Minute + 59*time.Second + 999*time.Millisecond + 250*time.Microsecond, Converged: true, Fractional: true},
		resnet(27*time.Minute+30*time.Second, true),
		resnet(26*time.Minute, false),
	}
	var llamaTen []LogSpec
	for i := range 10 {
		llamaTen = append(llamaTen, llama(time.Duration(20+i*i%7)*time.Minute+time.Duration(i)*time.Second, i != 6))
	}
	for _, tc := range []struct {
		name, reason string
		specs        []LogSpec
		// final is the expected Final score from the converged times, in
		// minutes; nil when compute_score prints None.
		final   func(converged []float64, files int) *float64
		skipped bool // OlympicSkipped
	}{
		{"resnet-5-one-aborted", "olympic average: the aborted run is the dropped slowest, so only the fastest of the 4 converged is dropped",
			five, func(c []float64, _ int) *float64 { v := olympic(c, 1); return &v }, false},
		{"resnet-5-converged", "all converged: the fastest and the slowest are dropped",
			[]LogSpec{resnet(30*time.Minute, true), resnet(25*time.Minute, true), resnet(41*time.Minute, true), five[1], five[2]},
			func(c []float64, _ int) *float64 { v := olympic(c, 0); return &v }, false},
		{"llama2_70b_lora-10-one-aborted", "llama2_70b_lora needs 10 runs; 9 converged, the fastest dropped",
			llamaTen, func(c []float64, _ int) *float64 { v := olympic(c, 1); return &v }, false},
		{"llama2_70b_lora-5", "fewer than the 10 runs required: no olympic average, the sum of the converged times over all 5 files, aborted one included",
			llamaTen[3:8], func(c []float64, files int) *float64 {
				sum := 0.0
				for _, v := range c {
					sum += v
				}
				v := sum / float64(files)
				return &v
			}, true},
		{"resnet-5-rank-skew", "ranks 7 ms apart: mlperf-logging measures from the last rank's run_start to rank 0's run_stop",
			[]LogSpec{five[0], five[3], {Benchmark: "resnet", TimeToTrain: 29 * time.Minute, Converged: true, Ranks: 4, RankSkew: 7 * time.Millisecond}, five[2], five[4]},
			func(c []float64, _ int) *float64 { v := olympic(c, 1); return &v }, false},
		{"resnet-5-two-aborted", "more non-converged runs than the one olympic scoring may drop: no score",
			[]LogSpec{five[0], five[1], five[4], resnet(40*time.Minute, false), five[3]},
			func([]float64, int) *float64 { return nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			paths, err := WriteSet(dir, tc.specs)
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != len(tc.specs) {
				t.Fatalf("%d paths for %d specs", len(paths), len(tc.specs))
			}
			score, err := ComputeScore(py, dir, "4.0.0")
			if err != nil {
				t.Fatal(err)
			}
			var converged []float64
			for i, spec := range tc.specs {
				base := fmt.Sprintf("result_%d.txt", i)
				got, ok := score.PerFile[base]
				if !spec.Converged {
					if ok || score.Dropped[base] != "Compliance check failed" {
						t.Errorf("%s (not converged): score %v (%t), dropped %q; want it dropped", base, got, ok, score.Dropped[base])
					}
					continue
				}
				// mlperf-logging's time to train: the last run_start before
				// the first run_stop, so the last rank's start.
				want := (spec.TimeToTrain - time.Duration(max(spec.Ranks, 1)-1)*spec.RankSkew).Minutes()
				converged = append(converged, want)
				if !ok || math.Abs(got-want) > 1e-9 {
					t.Errorf("%s: %v minutes (%t), want %v", base, got, ok, want)
				}
			}
			want := tc.final(converged, len(tc.specs))
			switch {
			case want == nil && score.Final != nil:
				t.Errorf("Final %v, want none (%s)", *score.Final, tc.reason)
			case want != nil && score.Final == nil:
				t.Errorf("no Final, want %v (%s)", *want, tc.reason)
			case want != nil && math.Abs(*score.Final-*want) > 1e-9:
				t.Errorf("Final %v, want %v (%s)", *score.Final, *want, tc.reason)
			}
			if score.OlympicSkipped != tc.skipped {
				t.Errorf("OlympicSkipped %t, want %t", score.OlympicSkipped, tc.skipped)
			}
			if t.Failed() {
				t.Logf("compute_score printed:\n%s", score.Output)
			}
		})
	}
}
