package gbt

import (
	"strings"
	"testing"

	"aimeter/loadgen"
)

// throughputRun is the hand-worked throughput example (times in ms), with
// T_DIP intervals [recv, post end] on the test clock:
//
//	S1 ok    issued 0,  done 12, 10 tokens; T_DIP [0, 10],  first token sent 2
//	S2 ok    issued 1,  done 16, 20 tokens; T_DIP [5, 15],  first token sent 8   (overlaps S1)
//	S3 ok    issued 18, done 33, 30 tokens; T_DIP [20, 30], first token sent 21  (disjoint)
//	S4 lost  issued 35;                     T_DIP [40, 45] reported, no first token
//	S5 error issued 50, done 52;            no stage times
//
// Union: [0, 15] (15 ms) + [20, 30] (10 ms) + [40, 45] (5 ms) = 30 ms; the
// lost sample's processing stays in the time base but not in the count
// (IN-74 (3)). Th_inf = 3 / 0.030 s = 100 samples/s; Th_tok = 60 / 0.030 s
// = 2000 tokens/s.
func throughputRun() ([]loadgen.Record, []loadgen.StageTimes) {
	rec := func(issued, done float64, tokens int64, st loadgen.Status) loadgen.Record {
		c := loadgen.NoTime
		if done >= 0 {
			c = ms(done)
		}
		return loadgen.Record{IssuedNs: ms(issued), ScheduledNs: ms(issued), FirstTokenNs: loadgen.NoTime,
			CompletedNs: c, Tokens: tokens, Status: st}
	}
	records := []loadgen.Record{
		rec(0, 12, 10, loadgen.StatusOK),
		rec(1, 16, 20, loadgen.StatusOK),
		rec(18, 33, 30, loadgen.StatusOK),
		rec(35, -1, 0, loadgen.StatusLost),
		rec(50, 52, 0, loadgen.StatusError),
	}
	stages := []loadgen.StageTimes{
		stagesMs(0, -1, -1, 1, 9, 9, 10, 2),
		stagesMs(5, -1, -1, 6, 15, -1, -1, 8),
		stagesMs(20, 20, 21, 21, 30, -1, -1, 21),
		stagesMs(40, -1, -1, 41, 45, -1, -1, -1),
		loadgen.NoStages,
	}
	return records, stages
}

func TestInferenceThroughputHandWorked(t *testing.T) {
	records, stages := throughputRun()
	rows := []struct {
		why         string
		stages      []loadgen.StageTimes
		opts        ThroughputOptions
		basis       string
		cover, tcov int64
		tokens      int64
		sps, tps    float64
	}{
		{"GB-7.6.4-T18-samples/-tokens: union 15 + 10 + 5 = 30 ms; 3 samples, 60 tokens",
			stages, ThroughputOptions{}, BasisTDIPUnion, ms(30), ms(30), 60, 100, 2000},
		{"Table 18 d), IN-74 (4): tokens 9+19+29 = 57; token intervals [2,10] [8,15] [21,30] [40,45] → 13 + 9 + 5 = 27 ms",
			stages, ThroughputOptions{ExcludeFirstToken: true}, BasisTDIPUnion, ms(30), ms(27), 57, 100, 57 / 0.027},
		{"stage times absent: tester span [0, 52] ms = 52 ms, not conformant",
			nil, ThroughputOptions{}, BasisTesterSpan, ms(52), ms(52), 60, 3 / 0.052, 60 / 0.052},
	}
	for _, row := range rows {
		th := InferenceThroughput(records, row.stages, row.opts)
		if th.Basis != row.basis || th.CoverNs != row.cover || th.TokenCoverNs != row.tcov || th.Tokens != row.tokens {
			t.Errorf("%s: basis %s cover %d token cover %d tokens %d; want %s %d %d %d",
				row.why, th.Basis, th.CoverNs, th.TokenCoverNs, th.Tokens, row.basis, row.cover, row.tcov, row.tokens)
		}
		if !near(th.SamplesPerSecond, row.sps) || !near(th.TokensPerSecond, row.tps) {
			t.Errorf("%s: %v samples/s, %v tokens/s; want %v and %v", row.why, th.SamplesPerSecond, th.TokensPerSecond, row.sps, row.tps)
		}
		if th.Samples != 3 || th.Lost != 1 || th.Errors != 1 {
			t.Errorf("%s: counts %d ok, %d lost, %d errors; want 3, 1, 1 (IN-74 (3))", row.why, th.Samples, th.Lost, th.Errors)
		}
		if th.Conformant != (row.basis == BasisTDIPUnion) {
			t.Errorf("%s: conformant = %v", row.why, th.Conformant)
		}
	}
	// S4 has no first-token time: its interval stays whole and is noted.
	th := InferenceThroughput(records, stages, ThroughputOptions{ExcludeFirstToken: true})
	if len(th.Warnings) != 1 || !strings.Contains(th.Warnings[0], "1 samples have no first-token send time") {
		t.Errorf("warnings = %q", th.Warnings)
	}
}

// TestInferenceThroughputSUTClock: intervals on the SUT's own clock cannot
// be merged on one time line (IN-69); the tester span is used and labelled.
func TestInferenceThroughputSUTClock(t *testing.T) {
	records, stages := throughputRun()
	for i := range stages {
		stages[i].Clock = loadgen.SUTClock
	}
	th := InferenceThroughput(records, stages, ThroughputOptions{})
	if th.Basis != BasisTesterSpan || th.Conformant || !strings.Contains(th.Note, ReasonClocksNotSynchronised) || th.CoverNs != ms(52) {
		t.Errorf("SUT clock: %+v; want the tester span of 52 ms, labelled with %q", th, ReasonClocksNotSynchronised)
	}
	// Mixed clocks: the test-clock intervals S1, S2 ([0, 15]) form the
	// union; the other two are left out with a warning.
	stages[0].Clock, stages[1].Clock = loadgen.TestClock, loadgen.TestClock
	th = InferenceThroughput(records, stages, ThroughputOptions{})
	if th.Basis != BasisTDIPUnion || th.CoverNs != ms(15) || th.Intervals != 2 || len(th.Warnings) != 1 {
		t.Errorf("mixed clocks: %+v; want a 15 ms union of 2 intervals and one warning", th)
	}
}

func TestInferenceThroughputEmpty(t *testing.T) {
	th := InferenceThroughput(nil, nil, ThroughputOptions{})
	if th.SamplesPerSecond != 0 || th.CoverNs != 0 || th.Basis != BasisTesterSpan {
		t.Errorf("empty run: %+v", th)
	}
	records, _ := throughputRun()
	lostOnly := records[3:4]
	th = InferenceThroughput(lostOnly, nil, ThroughputOptions{})
	if th.SamplesPerSecond != 0 || th.CoverNs != 0 {
		t.Errorf("only a lost sample: %+v", th)
	}
}
