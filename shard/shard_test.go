package shard

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"aimeter/clocksync"
	"aimeter/loadgen"
)

// TestRecordRoundTrip: shard.json reads back what was written.
func TestRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	in := &Record{Index: 2, Count: 4, Rule: RuleQueryModN, ScheduleSHA256: strings.Repeat("ab", 32), PassSchedules: []string{"x"},
		MinQueryCount: 25, StartAt: &at, LocalStartAt: &at, StartToleranceNs: 1e8, StartLateNs: 1234,
		Clock: &clocksync.Measurement{URL: "http://ref/api/v1/time", Offset: -3 * time.Millisecond, Uncertainty: 40 * time.Microsecond, Exchanges: 8}}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "shard 2/4" || !out.Sharded() || out.Clock.Offset != in.Clock.Offset || !out.StartAt.Equal(at) || out.StartLateNs != 1234 {
		t.Fatalf("read back %+v", out)
	}
}

// TestReadRefuses: a malformed shard.json is an error naming the file.
func TestReadRefuses(t *testing.T) {
	for _, row := range []struct{ why, body string }{
		{"an unknown field", `{"index":0,"count":2,"shard":1}`},
		{"an index out of range", `{"index":2,"count":2}`},
		{"no shards", `{"index":0,"count":0}`},
		{"not JSON", `shard 0/2`},
	} {
		if _, err := Read(strings.NewReader(row.body)); err == nil || !strings.Contains(err.Error(), File) {
			t.Errorf("%s: %v, want an error naming %s", row.why, err, File)
		}
	}
}

// TestParseSpecAndEnv: the two ways of naming a shard agree, and each bad
// one says what is wrong.
func TestParseSpecAndEnv(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvIndex {
				return v
			}
			return ""
		}
	}
	for i := range 5 {
		a, err := ParseSpec(strings.Repeat(" ", i%2) + string(rune('0'+i)) + "/5")
		b, err2 := FromEnv(5, env(string(rune('0'+i))))
		if err != nil || err2 != nil || a != b || a != (loadgen.Shard{Index: i, Count: 5}) {
			t.Fatalf("shard %d: %v %v, %v %v", i, a, err, b, err2)
		}
	}
	for _, row := range []struct{ spec, says string }{
		{"5/5", "out of range"}, {"-1/5", "out of range"}, {"1", "want I/N"}, {"1/x", "whole number ≥ 1"}, {"x/2", "whole number from 0 to 1"}, {"0/-2", "whole number ≥ 1"},
	} {
		if _, err := ParseSpec(row.spec); err == nil || !strings.Contains(err.Error(), row.says) {
			t.Errorf("%q: %v, want %q", row.spec, err, row.says)
		}
	}
	for _, row := range []struct {
		count   int
		v, says string
	}{{4, "", "is not set"}, {4, "x", "is not a number"}, {4, "4", "out of range"}, {4, "-1", "out of range"}, {0, "0", "≥ 1"}} {
		if _, err := FromEnv(row.count, env(row.v)); err == nil || !strings.Contains(err.Error(), row.says) {
			t.Errorf("--shards %d with %q: %v, want %q", row.count, row.v, err, row.says)
		}
	}
}
