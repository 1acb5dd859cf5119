package collect

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"aimeter/train"
)

// BenchmarkPostBatch measures the collector's own cost of storing a batch
// of 16 events (decode, validate, store), without the network: the server
// CPU per event behind the load test's rate.
func BenchmarkPostBatch(b *testing.B) {
	s := NewServer(Options{MaxEvents: 1 << 30})
	evs := make([]train.Event, 16)
	for i := range evs {
		v := 0.9
		evs[i] = train.Event{Kind: train.Utilization, Node: "node3", Rank: 27, Mono: int64(i) * 1e6, Wall: time.Now(), Chip: 3, Value: &v}
	}
	body, _ := json.Marshal(evs)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	seq := 0
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/events", bytes.NewReader(body))
		req.Header.Set(SeqHeader, strconv.Itoa(seq))
		seq++
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/16, "ns/event")
}
