// Package mllogtest is test support for MLPerf Training result logs: it
// writes logs that MLCommons' own tools (PyPI mlperf-logging 4.1.68, the
// compliance checker and the result summarizer of the closed division,
// ruleset 4.0.0) accept, and runs those tools, so that tests can compare
// aimeter's time-to-train figures with mlperf-logging's.
//
// A log is lines `:::MLLOG {json}` as mlperf-logging's mllog writes them
// (json.dumps with its default separators). WriteLog writes one from a
// LogSpec; WriteSet writes a folder of result_N.txt files; CheckCompliance
// and ComputeScore run `python -m mlperf_logging.compliance_checker` and
// `python -m mlperf_logging.result_summarizer.compute_score`; Python finds a
// virtualenv that has mlperf_logging (scripts/install-peers.sh kserve-python
// installs one).
//
// What mlperf-logging does with such logs, as read from its 4.1.68 source:
//
//   - Its parser keeps every line that contains ":::MLLOG " and drops what
//     comes before it, so `srun --label` prefixes ("3: ") are accepted. It
//     does not remove duplicates: a record printed by every rank counts once
//     per rank. A key the rules want EXACTLY_ONE of, found several times with
//     equal values, is only a warning, so a multi-rank log still passes.
//   - The time to train is (run_stop − run_start) / 60000 minutes, with
//     time_ms parsed by Python's float() (fractional values are fine, but a
//     time_ms near 1.7e12 is held to the nearest 2^-12 ms), run_stop the first
//     run_stop line of the file and run_start the last run_start line before
//     it (it keeps overwriting run_start until it has both). In a log
//     printed by several ranks that is the last rank's run_start and the
//     first rank's run_stop.
//   - A file that fails the compliance check (for example, one that never
//     reaches the target accuracy) is "dropped"; with at most one dropped
//     file (four for unet3d) the olympic average sorts the converged times,
//     drops the fastest, and drops the slowest only when no file was
//     dropped. With fewer files than the benchmark needs (resnet 5,
//     llama2_70b_lora 10) it skips the olympic average and prints the sum of
//     the converged times divided by the number of files, dropped ones
//     included. With too many dropped files it prints "None".
//   - The checks run line by line in file order: init_stop must come less
//     than 30 minutes after the first init_start (240 in the open
//     division), a limit that submission_division sets, so that record must
//     come before init_stop (before it, the limit is 0 and init_stop fails).
//   - compute_score needs no --system (it is only printed).
//   - compute_score in 4.1.68 cannot print a strong-scaling score at all: it
//     unpacks four values from a function that returns five. ComputeScore
//     works around that (see Score.Patched).
package mllogtest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Benchmarks are the benchmarks WriteLog writes logs of.
var Benchmarks = []string{"resnet", "llama2_70b_lora"}

// DefaultStart is the time of the first record when LogSpec.Start is zero:
// time_ms 1700000000000.
var DefaultStart = time.UnixMilli(1_700_000_000_000).UTC()

// LogSpec describes one MLPerf Training result log.
type LogSpec struct {
	// Benchmark is "resnet" (ResNet-50 with LARS: evaluations keyed by
	// epoch_num, top-1 target 0.759) or "llama2_70b_lora" (evaluations keyed
	// by samples_count, eval_accuracy a loss with target ≤ 0.925); WriteLog
	// returns an error for any other.
	Benchmark string

	// Start is the time of the first record (cache_clear, init_start and
	// the hyperparameters); zero means DefaultStart.
	Start time.Time

	// InitDuration is init_start → init_stop (run_start follows init_stop at
	// once); zero means 2 minutes. The closed division allows under 30.
	InitDuration time.Duration

	// TimeToTrain is run_start → run_stop, exactly: mlperf-logging's score
	// of the log is TimeToTrain in minutes (up to the rounding of time_ms to
	// float64; less with RankSkew). It must be positive.
	TimeToTrain time.Duration

	// Converged: true, the last evaluation meets the benchmark's target and
	// run_stop's status is "success"; false, no evaluation meets it and
	// run_stop's status is "aborted", so the compliance checker fails the
	// log on that alone and the result summarizer drops it.
	Converged bool

	// Ranks is how many ranks print the log. 0 or 1: one rank, lines without
	// a prefix. More: every record is printed by each rank in turn, rank r's
	// line prefixed "r: " as `srun --label` does (ranks 0…Ranks−1, one
	// record after another). mlperf-logging accepts such a log, warning
	// that keys it wants once occur Ranks times (an error only under the
	// checker's --werror).
	Ranks int

	// RankSkew shifts every time_ms of rank r by r×RankSkew (ranks whose
	// clocks or barriers differ); zero, all ranks print the same times.
	// Every rank's own run_start → run_stop is still TimeToTrain, but
	// mlperf-logging measures from the last rank's run_start to rank 0's
	// run_stop: TimeToTrain − (Ranks−1)×RankSkew.
	RankSkew time.Duration

	// Evals is the number of evaluations, evenly spread over the run, the
	// last one ending at run_stop; zero means 4. resnet evaluates every 4
	// epochs; llama2_70b_lora first after 3072 samples, then every 384.
	Evals int

	// Fractional prints time_ms as Python prints mllog's float milliseconds,
	// with a fractional part to the microsecond (1700000000123.456; a whole
	// millisecond prints as 1700000000123.0); Start, InitDuration,
	// TimeToTrain and RankSkew must then be whole microseconds, and records
	// between run_start and run_stop fall on microseconds. Otherwise time_ms
	// is an integer and those four must be whole milliseconds.
	Fractional bool

	// Org is submission_org; empty means "aimeter".
	Org string
}

// record is one log record before it is printed: Value and the values of
// Meta are JSON literals.
type record struct {
	us        int64 // time, microseconds since the Unix epoch
	eventType string
	key       string
	value     string
	meta      [][2]string
}

const (
	point = "POINT_IN_TIME"
	start = "INTERVAL_START"
	stop  = "INTERVAL_END"
)

// benchmark is what differs between the benchmarks.
type benchmark struct {
	hyper [][2]string // key, JSON value
	// evalMeta is the metadata of block k's block_start, block_stop and of
	// its evaluation (eval_start, eval_accuracy, eval_stop).
	evalMeta func(k int) (blockStart, blockStop, eval [][2]string)
	// accuracy is evaluation k's value of n, in units of 1e-4.
	accuracy func(k, n int, converged bool) int
}

var benchmarks = map[string]benchmark{
	"resnet": {
		hyper: [][2]string{
			{"global_batch_size", "3264"},
			{"gradient_accumulation_steps", "1"},
			{"train_samples", "1281167"},
			{"eval_samples", "50000"},
			{"opt_name", `"lars"`},
			{"lars_opt_base_learning_rate", "10.5"},
			{"lars_opt_end_learning_rate", "0.0001"},
			{"lars_opt_learning_rate_decay_poly_power", "2"},
			{"lars_opt_learning_rate_decay_steps", "15000"},
			{"lars_epsilon", "0.0"},
			{"lars_opt_learning_rate_warmup_epochs", "2"},
			{"lars_opt_momentum", "0.9"},
			{"lars_opt_weight_decay", "5e-05"},
		},
		evalMeta: func(k int) (bs, be, ev [][2]string) {
			const per = 4 // epochs per evaluation
			block := [][2]string{{"first_epoch_num", strconv.Itoa(1 + per*k)}, {"epoch_count", strconv.Itoa(per)}}
			return block, block, [][2]string{{"epoch_num", strconv.Itoa(per * (k + 1))}}
		},
		// top-1 rises from 0.5000 to 0.7500; the last is 0.7600 (target
		// 0.759) or 0.7550.
		accuracy: func(k, n int, converged bool) int {
			if k == n-1 {
				if converged {
					return 7600
				}
				return 7550
			}
			return ramp(5000, 7500, k, n-1)
		},
	},
	"llama2_70b_lora": {
		hyper: [][2]string{
			{"global_batch_size", "8"},
			{"gradient_accumulation_steps", "1"},
			{"train_samples", "3901"},
			{"eval_samples", "173"},
			{"opt_base_learning_rate", "0.0004"},
			{"opt_adamw_weight_decay", "0.0001"},
			{"opt_gradient_clip_norm", "0.3"},
			{"opt_learning_rate_training_steps", "1024"},
			{"lora_rank", "16"},
			{"lora_alpha", "32"},
		},
		evalMeta: func(k int) (bs, be, ev [][2]string) {
			samples := func(k int) string { return strconv.Itoa(3072 + 384*(k-1)) }
			from := "0"
			if k > 0 {
				from = samples(k)
			}
			to := [][2]string{{"samples_count", samples(k + 1)}}
			return [][2]string{{"samples_count", from}}, to, to
		},
		// the loss falls from 0.9600 to 0.9300; the last is 0.9240 (target
		// ≤ 0.925) or 0.9280.
		accuracy: func(k, n int, converged bool) int {
			if k == n-1 {
				if converged {
					return 9240
				}
				return 9280
			}
			return ramp(9600, 9300, k, n-1)
		},
	},
}

// ramp is step k of n from a to b (a when n ≤ 1).
func ramp(a, b, k, n int) int {
	if n <= 1 {
		return a
	}
	return a + (b-a)*k/(n-1)
}

// records returns the log's records, one rank's, in order.
func records(spec LogSpec) ([]record, error) {
	b, ok := benchmarks[spec.Benchmark]
	if !ok {
		return nil, fmt.Errorf("mllogtest: benchmark %q: want one of %s", spec.Benchmark, strings.Join(Benchmarks, ", "))
	}
	unit, unitName := time.Millisecond, "millisecond"
	if spec.Fractional {
		unit, unitName = time.Microsecond, "microsecond"
	}
	startT := spec.Start
	if startT.IsZero() {
		startT = DefaultStart
	}
	init := spec.InitDuration
	if init == 0 {
		init = 2 * time.Minute
	}
	evals := spec.Evals
	if evals == 0 {
		evals = 4
	}
	switch {
	case startT.Before(time.Unix(0, 0)):
		return nil, fmt.Errorf("mllogtest: Start %s is before the Unix epoch", startT.Format(time.RFC3339Nano))
	case spec.TimeToTrain <= 0:
		return nil, fmt.Errorf("mllogtest: TimeToTrain %v: want it positive", spec.TimeToTrain)
	case init < 0:
		return nil, fmt.Errorf("mllogtest: InitDuration %v: want it positive", init)
	case evals < 0:
		return nil, fmt.Errorf("mllogtest: Evals %d: want it positive", evals)
	case spec.Ranks < 0:
		return nil, fmt.Errorf("mllogtest: Ranks %d: want 0 or more", spec.Ranks)
	case spec.RankSkew < 0:
		return nil, fmt.Errorf("mllogtest: RankSkew %v: want 0 or more", spec.RankSkew)
	case startT.UnixNano()%int64(unit) != 0 || init%unit != 0 || spec.TimeToTrain%unit != 0 || spec.RankSkew%unit != 0:
		return nil, fmt.Errorf("mllogtest: Start %s, InitDuration %v, TimeToTrain %v and RankSkew %v must be whole %ss (Fractional %t)",
			startT.Format(time.RFC3339Nano), init, spec.TimeToTrain, spec.RankSkew, unitName, spec.Fractional)
	}
	org := spec.Org
	if org == "" {
		org = "aimeter"
	}

	t0 := startT.UnixMicro()
	runStart := t0 + init.Microseconds()
	ttt := spec.TimeToTrain.Microseconds()
	// at is the time fraction num/den of the run, on the log's time unit.
	at := func(num, den int64) int64 {
		t := runStart + ttt*num/den
		if !spec.Fractional {
			t -= t % 1000
		}
		return t
	}

	str := strconv.Quote
	recs := []record{
		{us: t0, eventType: point, key: "cache_clear", value: "true"},
		{us: t0, eventType: start, key: "init_start", value: "null"},
		{us: t0, eventType: point, key: "submission_benchmark", value: str(spec.Benchmark)},
		{us: t0, eventType: point, key: "submission_org", value: str(org)},
		{us: t0, eventType: point, key: "submission_division", value: `"closed"`},
		{us: t0, eventType: point, key: "submission_status", value: `"onprem"`},
		{us: t0, eventType: point, key: "submission_platform", value: `"aimeter-mllogtest"`},
	}
	for _, h := range b.hyper {
		recs = append(recs, record{us: t0, eventType: point, key: h[0], value: h[1]})
	}
	recs = append(recs,
		record{us: runStart, eventType: stop, key: "init_stop", value: "null"},
		record{us: runStart, eventType: start, key: "run_start", value: "null"},
	)
	// Evaluation k takes the last tenth of the k-th of evals equal parts of
	// the run; the block of training before it, the rest.
	n := int64(evals)
	var last [][2]string
	for k := range evals {
		bs, be, ev := b.evalMeta(k)
		k64 := int64(k)
		evalAt := at(10*k64+9, 10*n)
		recs = append(recs,
			record{us: at(k64, n), eventType: start, key: "block_start", value: "null", meta: bs},
			record{us: evalAt, eventType: stop, key: "block_stop", value: "null", meta: be},
			record{us: evalAt, eventType: start, key: "eval_start", value: "null", meta: ev},
			record{us: at(k64+1, n), eventType: point, key: "eval_accuracy", value: accuracy(b.accuracy(k, evals, spec.Converged)), meta: ev},
			record{us: at(k64+1, n), eventType: stop, key: "eval_stop", value: "null", meta: ev},
		)
		last = ev
	}
	status := `"success"`
	if !spec.Converged {
		status = `"aborted"`
	}
	recs = append(recs, record{us: runStart + ttt, eventType: stop, key: "run_stop", value: "null",
		meta: append(append([][2]string{}, last...), [2]string{"status", status})})
	return recs, nil
}

// accuracy prints v×1e-4 as Python prints the float: 0.7600 is 0.76.
func accuracy(v int) string {
	return strconv.FormatFloat(float64(v)/1e4, 'f', -1, 64)
}

// timeMS prints a time in microseconds as time_ms.
func timeMS(us int64, fractional bool) string {
	ms, frac := us/1000, us%1000
	if !fractional {
		return strconv.FormatInt(ms, 10)
	}
	f := strings.TrimRight(fmt.Sprintf("%03d", frac), "0")
	if f == "" {
		f = "0"
	}
	return strconv.FormatInt(ms, 10) + "." + f
}

// WriteLog writes the log that spec describes to w. The same spec always
// gives the same bytes.
func WriteLog(w io.Writer, spec LogSpec) error {
	recs, err := records(spec)
	if err != nil {
		return err
	}
	ranks := max(spec.Ranks, 1)
	skew := spec.RankSkew.Microseconds()
	var sb strings.Builder
	for i, r := range recs {
		for rank := range ranks {
			if spec.Ranks > 1 {
				fmt.Fprintf(&sb, "%d: ", rank)
			}
			fmt.Fprintf(&sb, `:::MLLOG {"namespace": "", "time_ms": %s, "event_type": %q, "key": %q, "value": %s, "metadata": {"file": "train.py", "lineno": %d`,
				timeMS(r.us+int64(rank)*skew, spec.Fractional), r.eventType, r.key, r.value, 100+i)
			for _, m := range r.meta {
				fmt.Fprintf(&sb, ", %q: %s", m[0], m[1])
			}
			sb.WriteString("}}\n")
		}
	}
	_, err = io.WriteString(w, sb.String())
	return err
}

// WriteSet writes specs[i] to dir/result_i.txt, the names that
// mlperf-logging's result summarizer reads, and returns the paths.
func WriteSet(dir string, specs []LogSpec) ([]string, error) {
	if len(specs) == 0 {
		return nil, errors.New("mllogtest: WriteSet: no specs")
	}
	var paths []string
	for i, spec := range specs {
		p := filepath.Join(dir, fmt.Sprintf("result_%d.txt", i))
		var sb strings.Builder
		if err := WriteLog(&sb, spec); err != nil {
			return paths, fmt.Errorf("%s: %w", p, err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
