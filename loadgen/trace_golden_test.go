package loadgen

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTraceGolden checks the pre-generated traffic (effective settings,
// loadable sets, per-query sample indices, Server schedule, generated query
// count / samples per query / duration) against testdata/trace/golden.txt,
// the output of gen_trace.cc: an independent C++14 re-implementation of
// LoadGen §2.2/§4/§5 that uses the real libstdc++ std::mt19937,
// uniform_int_distribution, shuffle, exponential_distribution and
// duration_cast (see testdata/trace/README).
func TestTraceGolden(t *testing.T) {
	dir := filepath.Join("testdata", "trace")
	cases := readTraceCases(t, filepath.Join(dir, "cases.txt"))
	golden := readTraceGolden(t, filepath.Join(dir, "golden.txt"))
	if len(cases) != len(golden) {
		t.Fatalf("cases.txt has %d cases but golden.txt has %d: regenerate golden.txt (see testdata/trace/README)", len(cases), len(golden))
	}
	for i, c := range cases {
		g := golden[i]
		if g.name != c.name {
			t.Fatalf("case %d: cases.txt names %q but golden.txt names %q: regenerate golden.txt", i, c.name, g.name)
		}
		t.Run(c.name, func(t *testing.T) { checkTraceCase(t, c, g) })
	}
}

type traceCase struct {
	name string
	line string
	kv   map[string]string
}

type traceQuery struct {
	sched int64
	idx   []uint64
}

type traceSet struct {
	distEnd  int
	idx      []uint64
	queries  []traceQuery
	count    int
	spq      int
	duration int64
	hasGen   bool
}

type traceGolden struct {
	name string
	eff  map[string]string
	sets []*traceSet
}

func readTraceCases(t *testing.T, path string) []traceCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []traceCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		kv := map[string]string{}
		for _, tok := range strings.Fields(line) {
			k, v, ok := strings.Cut(tok, "=")
			if !ok {
				t.Fatalf("cases.txt: no '=' in %q (line %q)", tok, line)
			}
			kv[k] = v
		}
		if kv["name"] == "" {
			t.Fatalf("cases.txt: case without name: %q", line)
		}
		out = append(out, traceCase{name: kv["name"], line: line, kv: kv})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func parseTraceIndices(t *testing.T, s string) []uint64 {
	t.Helper()
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	out := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			t.Fatalf("golden.txt: bad index list %q: %v", s, err)
		}
		out[i] = v
	}
	return out
}

func readTraceGolden(t *testing.T, path string) []*traceGolden {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*traceGolden
	var cur *traceGolden
	var set *traceSet
	atoi := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("golden.txt: bad number %q", s)
		}
		return v
	}
	for n, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		bad := func() { t.Fatalf("golden.txt:%d: unexpected line %q", n+1, line) }
		switch f[0] {
		case "case":
			if len(f) != 2 {
				bad()
			}
			cur = &traceGolden{name: f[1], eff: map[string]string{}}
			set = nil
			out = append(out, cur)
		case "eff":
			if cur == nil {
				bad()
			}
			for _, tok := range f[1:] {
				k, v, _ := strings.Cut(tok, "=")
				cur.eff[k] = v
			}
		case "set":
			if cur == nil || len(f) != 4 || !strings.HasPrefix(f[2], "end=") {
				bad()
			}
			set = &traceSet{distEnd: int(atoi(strings.TrimPrefix(f[2], "end="))), idx: parseTraceIndices(t, f[3])}
			cur.sets = append(cur.sets, set)
		case "q":
			if set == nil || len(f) < 2 || len(f) > 3 {
				bad()
			}
			q := traceQuery{sched: atoi(f[1])}
			if len(f) == 3 {
				q.idx = parseTraceIndices(t, f[2])
			}
			set.queries = append(set.queries, q)
		case "gen":
			if set == nil || len(f) != 4 {
				bad()
			}
			set.count, set.spq, set.duration, set.hasGen = int(atoi(f[1])), int(atoi(f[2])), atoi(f[3]), true
		case "end":
			cur, set = nil, nil
		default:
			bad()
		}
	}
	return out
}

// traceSettings builds the requested Settings of one case, starting from
// LoadGen's defaults, and returns the QSL total and performance counts.
func traceSettings(t *testing.T, c traceCase) (s Settings, total, qslPSC uint64) {
	t.Helper()
	s = DefaultSettings()
	u64 := func(v string) uint64 {
		x, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			t.Fatalf("case %s: bad integer %q", c.name, v)
		}
		return x
	}
	f64 := func(v string) float64 {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("case %s: bad number %q", c.name, v)
		}
		return x
	}
	flag := func(v string) bool {
		switch v {
		case "1", "true":
			return true
		case "0", "false":
			return false
		}
		t.Fatalf("case %s: bad flag %q", c.name, v)
		return false
	}
	for k, v := range c.kv {
		switch k {
		case "name":
		case "scenario":
			sc, err := ParseScenario(v)
			if err != nil {
				t.Fatal(err)
			}
			s.Scenario = sc
		case "mode":
			switch v {
			case "accuracy":
				s.Mode = AccuracyOnly
			case "performance":
				s.Mode = PerformanceOnly
			default:
				t.Fatalf("case %s: bad mode %q", c.name, v)
			}
		case "qsl_total":
			total = u64(v)
		case "qsl_psc":
			qslPSC = u64(v)
		case "psc_override":
			s.PerformanceSampleCountOverride = u64(v)
		case "acc_override":
			s.AccuracySampleCountOverride = u64(v)
		case "min_duration_ms":
			s.MinDurationMs = u64(v)
		case "min_query_count":
			s.MinQueryCount = u64(v)
		case "expected_latency_ns":
			s.SingleStreamExpectedLatencyNs = u64(v)
			s.MultiStreamExpectedLatencyNs = u64(v)
		case "spq":
			s.MultiStreamSamplesPerQuery = u64(v)
		case "server_qps":
			s.ServerTargetQPS = f64(v)
		case "offline_qps":
			s.OfflineExpectedQPS = f64(v)
		case "qsl_seed":
			s.QSLRNGSeed = u64(v)
		case "sample_seed":
			s.SampleIndexRNGSeed = u64(v)
		case "schedule_seed":
			s.ScheduleRNGSeed = u64(v)
		case "unique":
			s.PerformanceIssueUnique = flag(v)
		case "same":
			s.PerformanceIssueSame = flag(v)
		case "same_index":
			s.PerformanceIssueSameIndex = u64(v)
		case "equal_issue":
			s.SampleConcatenatePermutation = flag(v)
		default:
			t.Fatalf("case %s: unknown key %q", c.name, k)
		}
	}
	return s, total, qslPSC
}

func formatTraceIndices(v []uint64) string {
	const max = 24
	var b strings.Builder
	for i, x := range v {
		if i == max {
			fmt.Fprintf(&b, ",…(%d total)", len(v))
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(x, 10))
	}
	return b.String()
}

func firstTraceDiff(want, got []uint64) int {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return i
		}
	}
	if len(want) != len(got) {
		return min(len(want), len(got))
	}
	return -1
}

func checkTraceCase(t *testing.T, c traceCase, g *traceGolden) {
	s, total, qslPSC := traceSettings(t, c)
	accuracy := s.Mode == AccuracyOnly
	eff, err := NewEffective(s, total, qslPSC)
	if err != nil {
		t.Fatalf("case %q: NewEffective: %v", c.line, err)
	}

	// §2.2 effective settings.
	effGot := map[string]string{
		"spq":                strconv.FormatUint(eff.SamplesPerQuery, 10),
		"min_query_count":    strconv.FormatUint(eff.MinQueryCount, 10),
		"target_duration_ms": strconv.FormatUint(eff.TargetDurationMs, 10),
		"psc":                strconv.FormatUint(eff.PerformanceSampleCount, 10),
		"period_ns":          "0",
	}
	if eff.Scenario != Server {
		effGot["period_ns"] = strconv.FormatInt(eff.period(), 10)
	}
	for _, k := range []string{"spq", "min_query_count", "target_duration_ms", "psc", "period_ns"} {
		if effGot[k] != g.eff[k] {
			t.Fatalf("case %q: effective %s = %s, C++ oracle says %s", c.line, k, effGot[k], g.eff[k])
		}
	}
	// The oracle prints accuracy_sample_count as §2.2 derives it (override or
	// QSL total, uncapped); only min(it, total) drives the traffic (§4 step 1),
	// so that is what this trace test compares.
	accWant, err := strconv.ParseUint(g.eff["acc"], 10, 64)
	if err != nil {
		t.Fatalf("golden.txt: case %s: bad acc %q", c.name, g.eff["acc"])
	}
	if got, want := min(eff.AccuracySampleCount, total), min(accWant, total); got != want {
		t.Fatalf("case %q: accuracy sample count used = %d, C++ oracle %d", c.line, got, want)
	}

	// §4 loadable sets.
	sets := generateLoadableSets(&eff, accuracy, total)
	if len(sets) != len(g.sets) {
		t.Fatalf("case %q: %d loadable sets, C++ oracle has %d", c.line, len(sets), len(g.sets))
	}
	var seqBase uint64
	for k, set := range sets {
		want := g.sets[k]
		if i := firstTraceDiff(want.idx, set.indices); i >= 0 {
			t.Fatalf("case %q: set %d differs at position %d:\n  want %s\n  got  %s",
				c.line, k, i, formatTraceIndices(want.idx), formatTraceIndices(set.indices))
		}
		if set.distEnd != want.distEnd {
			t.Fatalf("case %q: set %d distribution end = %d, want %d", c.line, k, set.distEnd, want.distEnd)
		}
		if !want.hasGen {
			t.Fatalf("golden.txt: case %s set %d has no gen line", c.name, k)
		}

		// §5 queries.
		gq := generateQueries(&eff, accuracy, set, seqBase)
		if gq.queries != want.count || len(want.queries) != want.count {
			t.Errorf("case %q: set %d: generated_query_count = %d, C++ oracle %d", c.line, k, gq.queries, want.count)
		}
		if gq.loggedSPQ != want.spq {
			t.Errorf("case %q: set %d: generated_samples_per_query = %d, C++ oracle %d", c.line, k, gq.loggedSPQ, want.spq)
		}
		if gq.duration != want.duration {
			t.Errorf("case %q: set %d: generated_query_duration = %d ns, C++ oracle %d ns", c.line, k, gq.duration, want.duration)
		}
		gq.materialize()
		period := eff.period()
		for q := range min(gq.queries, len(want.queries)) {
			wq := want.queries[q]
			lo, hi := gq.queryRange(q)
			got := make([]uint64, 0, hi-lo)
			for i := lo; i < hi; i++ {
				got = append(got, gq.sample(i).Index)
			}
			if i := firstTraceDiff(wq.idx, got); i >= 0 {
				t.Fatalf("case %q: set %d query %d: sample indices differ at position %d:\n  want %s\n  got  %s",
					c.line, k, q, i, formatTraceIndices(wq.idx), formatTraceIndices(got))
			}
			// LoadGen numbers samples in issue order (sequence ids are taken
			// as each query's samples are created), and the Responder maps a
			// ResponseID back to its position as id−1−seqBase: sample i of the
			// pass must carry ID seqBase+i+1.
			for i := lo; i < hi; i++ {
				if id := uint64(gq.sample(i).ID); id != seqBase+uint64(i)+1 {
					t.Fatalf("case %q: set %d query %d: sample %d (qsl index %d) has ResponseID %d, want %d (seqBase+i+1): the id no longer names its position",
						c.line, k, q, i, gq.sample(i).Index, id, seqBase+uint64(i)+1)
				}
			}
			if eff.Scenario == Server {
				if q >= len(gq.sched) || gq.sched[q] != wq.sched {
					gotSched := "missing"
					if q < len(gq.sched) {
						gotSched = strconv.FormatInt(gq.sched[q], 10)
					}
					t.Fatalf("case %q: set %d query %d: scheduled at %s ns, C++ oracle %d ns", c.line, k, q, gotSched, wq.sched)
				}
			} else if wq.sched != int64(q)*period {
				// Non-Server queries are not stored with a schedule; the
				// oracle's q·period must agree with Effective.period().
				t.Fatalf("case %q: set %d query %d: C++ oracle schedules at %d ns, q·period = %d ns", c.line, k, q, wq.sched, int64(q)*period)
			}
		}
		if eff.Scenario == Server && len(gq.sched) != gq.queries {
			t.Errorf("case %q: set %d: %d scheduled times for %d queries", c.line, k, len(gq.sched), gq.queries)
		}
		if gq.n != gq.queries*gq.spq {
			// Only the (never generated) Offline accuracy remainder query may be short.
			t.Errorf("case %q: set %d: %d samples for %d queries of %d", c.line, k, gq.n, gq.queries, gq.spq)
		}
		if t.Failed() {
			return
		}
		seqBase += uint64(gq.n)
	}
}
