package session

import (
	"runtime"
	"testing"
)

// BenchmarkSessionMemory holds 10 000 chat clients at once, each at the end
// of a 5-turn conversation (100 words in, 200 out a turn, the history
// holding every message), and reports the heap per session: what a run of
// 10 000 concurrent sessions keeps for their histories (issue 29). The
// conversations themselves (the data set) are counted apart.
func BenchmarkSessionMemory(b *testing.B) {
	const sessions = 10_000
	set, err := Generate(GenerateOptions{Sessions: sessions, MinTurns: 5, UserWords: 100, OutputTokens: 200, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var perSession, perClient float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		clients := make([]*Client, sessions)
		for i := range clients {
			clients[i] = NewClient(&set.Conversations[i])
		}
		for i, cl := range clients {
			for k := range set.Conversations[i].Turns {
				if _, _, _, _, ok := cl.Next(); !ok {
					b.Fatal("turn refused")
				}
				// A real answer is a new string from the network.
				cl.Answer(string([]byte(set.Conversations[i].Turns[k].Answer)))
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perSession = float64(after.HeapAlloc-before.HeapAlloc) / sessions
		total := 0
		for _, cl := range clients {
			total += cl.Bytes()
		}
		perClient = float64(total) / sessions
		runtime.KeepAlive(clients)
	}
	b.ReportMetric(perSession, "heap_B/session")
	b.ReportMetric(perClient, "history_B/session")
}
