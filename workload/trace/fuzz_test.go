package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkTrace holds the invariants of any trace Parse accepts.
func checkTrace(t *testing.T, tr *Trace) {
	if len(tr.Requests) == 0 {
		t.Fatal("accepted with no requests")
	}
	var words int
	for i, q := range tr.Requests {
		if q.AtNs < 0 || (i > 0 && q.AtNs < tr.Requests[i-1].AtNs) {
			t.Fatalf("request %d at %d: out of order", i, q.AtNs)
		}
		if q.InputTokens < 1 || q.InputTokens > MaxInputTokens || q.OutputTokens < 1 || q.OutputTokens > MaxOutputTokens {
			t.Fatalf("request %d lengths %d, %d", i, q.InputTokens, q.OutputTokens)
		}
		if tr.Format == Mooncake && len(q.HashIDs) != (q.InputTokens+BlockTokens-1)/BlockTokens {
			t.Fatalf("request %d: %d hash ids for %d tokens", i, len(q.HashIDs), q.InputTokens)
		}
		words += q.InputTokens
	}
	s, err := tr.Schedule(ScheduleOptions{Speedup: 3, MaxRequests: 50})
	if err != nil {
		t.Fatalf("schedule: %v", err)
	}
	for i := 1; i < len(s.Arrivals); i++ {
		if s.Arrivals[i] < s.Arrivals[i-1] || s.Arrivals[0] != 0 {
			t.Fatalf("arrivals %v out of order", s.Arrivals)
		}
	}
	if words < 20000 {
		set, err := s.Prompts("fuzz", PromptOptions{})
		if err != nil {
			t.Fatalf("prompts: %v", err)
		}
		for i := range set.Len() {
			if got := len(strings.Fields(set.Prompt(i).Text)); got != s.Requests[i].InputTokens {
				t.Fatalf("prompt %d: %d words for %d tokens", i, got, s.Requests[i].InputTokens)
			}
		}
	}
}

func FuzzParseMooncake(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "mooncake_sample.jsonl")); err == nil {
		f.Add(string(b))
	}
	f.Add(`{"timestamp":1.5,"input_length":513,"output_length":1,"hash_ids":[0,1]}`)
	f.Add(`{"timestamp":0,"input_length":1,"output_length":1,"hash_ids":[9],"extra":{"x":[1]}}` + "\n\n")
	f.Add(`{"timestamp":-0,"input_length":1e2,"output_length":null,"hash_ids":[]}`)
	f.Add("\xef\xbb\xbf{\"timestamp\":2}\n{}")
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := Parse(strings.NewReader(s), "fuzz", Mooncake)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "trace fuzz") {
				t.Fatalf("error without the trace's name: %v", err)
			}
			return
		}
		checkTrace(t, tr)
	})
}

func FuzzParseCSV(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "sessions.csv")); err == nil {
		f.Add(string(b))
	}
	f.Add("0,1,1\n0.5,2,3,s\n")
	f.Add("t_ms,input_tokens,output_tokens\n#c\n1,1,1\n")
	f.Add("\"1\",\"2\",\"3\",\"a,b\"\n")
	f.Add("1,1\n\"")
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := Parse(strings.NewReader(s), "fuzz", CSV)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "trace fuzz") {
				t.Fatalf("error without the trace's name: %v", err)
			}
			return
		}
		checkTrace(t, tr)
	})
}
