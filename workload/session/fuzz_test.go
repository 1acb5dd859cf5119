package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParseShareGPT(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "sharegpt_sample.json")); err == nil {
		f.Add(string(b))
	}
	f.Add(`{"id": 7, "conversations": [{"role": "user", "content": "a b"}, {"role": "assistant", "content": "c"}]}` + "\n")
	f.Add(`[{"conversations":[{"from":"human","value":"a"},{"from":"human","value":"b"}]}]`)
	f.Add("[\n{\"conversations\": [}\n]")
	f.Add(`[] x`)
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseShareGPT(strings.NewReader(s), "fuzz", ShareGPTOptions{})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "sharegpt fuzz") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		if len(set.Conversations) == 0 {
			t.Fatal("accepted without a conversation")
		}
		for _, c := range set.Conversations {
			if len(c.Turns) == 0 || len(c.Turns) > MaxTurns {
				t.Fatalf("conversation %d has %d turns", c.Index, len(c.Turns))
			}
			cl := NewClient(&c)
			for k := range c.Turns {
				turn, msgs, mt, _, ok := cl.Next()
				if !ok || turn != k || mt < 1 || msgs[len(msgs)-1].Role != "user" || strings.TrimSpace(msgs[len(msgs)-1].Content) == "" {
					t.Fatalf("conversation %d turn %d: %v %d %v", c.Index, k, ok, mt, msgs)
				}
				cl.Answer(c.Turns[k].Answer)
			}
		}
	})
}
