package train

import (
	"sync"
	"testing"
	"time"
)

func TestRecorderStamps(t *testing.T) {
	r := NewRecorder(RecorderOptions{Node: "n1", Rank: 3})
	r.TrainStart(1)
	r.AcceleratorStart(1, 5)
	r.EpochStart(1, 1)
	r.EpochEnd(1, 1, 640)
	r.Validation(1, 1, 0.9)
	r.Power(250)
	r.Utilization(2, 0.5)
	r.Send("x")
	r.GenerationEnd(1, 0, 138)
	r.TrainEnd(1, "success")
	r.Record(Event{Kind: PersistEnd, Trial: 1, Node: "other", Time: -5})
	evs := r.Events()
	if len(evs) != 11 || r.Len() != 11 {
		t.Fatalf("%d events", len(evs))
	}
	for i, e := range evs {
		if i > 0 && e.Time < evs[i-1].Time {
			t.Errorf("event %d at %d before event %d at %d", i, e.Time, i-1, evs[i-1].Time)
		}
		if e.Mono != e.Time || !e.Wall.Equal(r.Origin().Add(time.Duration(e.Time))) {
			t.Errorf("event %d: time %d mono %d wall %v", i, e.Time, e.Mono, e.Wall)
		}
		wantNode, wantRank := "n1", 3
		switch e.Kind {
		case PersistEnd:
			wantNode = "other" // Record keeps a node it is given
		case AcceleratorStart:
			wantRank = 5
		}
		if e.Node != wantNode || e.Rank != wantRank {
			t.Errorf("%s: node %q rank %d", e.Kind, e.Node, e.Rank)
		}
	}
	if evs[3].Count != 640 || *evs[4].Value != 0.9 || *evs[5].Value != 250 || evs[6].Chip != 2 || evs[7].ID != "x" || evs[8].Count != 138 || evs[9].Status != "success" {
		t.Errorf("fields lost: %+v", evs)
	}
	// Events returns copies: changing them changes nothing recorded.
	*evs[4].Value = 0
	if *r.Events()[4].Value != 0.9 {
		t.Error("Events shares values with the recorder")
	}
}

// TestRecorderConcurrent records from many goroutines; run with -race.
func TestRecorderConcurrent(t *testing.T) {
	r := NewRecorder(RecorderOptions{})
	const g, n = 8, 1000
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			for j := range n {
				r.Utilization(i, float64(j)/n)
			}
		})
	}
	wg.Wait()
	evs := r.Events()
	if len(evs) != g*n {
		t.Fatalf("%d events, want %d", len(evs), g*n)
	}
	sum := map[int]float64{}
	for _, e := range evs {
		sum[e.Chip] += *e.Value
	}
	for i := range g {
		if !near(sum[i], float64(n-1)/2) { // Σ j/n for j < n = (n−1)/2
			t.Errorf("chip %d: sum %v", i, sum[i])
		}
	}
}

// TestRecorderAllocations: with room reserved, recording allocates nothing
// (values come from a chunk allocated once per 256).
func TestRecorderAllocations(t *testing.T) {
	r := NewRecorder(RecorderOptions{Capacity: 10000})
	r.Power(1) // allocate the first value chunk
	if a := testing.AllocsPerRun(100, func() { r.EpochEnd(1, 1, 10) }); a != 0 {
		t.Errorf("EpochEnd: %v allocations", a)
	}
	if a := testing.AllocsPerRun(100, func() { r.Power(300) }); a != 0 {
		t.Errorf("Power: %v allocations per event", a)
	}
}

// BenchmarkRecorder compares recording an EpochEnd and a Power sample with
// a baseline that appends an event stamped with time.Now under a mutex,
// the least a concurrent recorder can do; both start from the same room.
func BenchmarkRecorder(b *testing.B) {
	b.Run("baseline", func(b *testing.B) {
		var mu sync.Mutex
		evs := make([]Event, 0, 256)
		b.ReportAllocs()
		for b.Loop() {
			mu.Lock()
			evs = append(evs, Event{Kind: EpochEnd, Time: time.Now().UnixNano(), Trial: 1, Epoch: 1, Count: 10})
			mu.Unlock()
		}
		if len(evs) == 0 {
			b.Fatal("nothing recorded")
		}
	})
	b.Run("EpochEnd", func(b *testing.B) {
		r := NewRecorder(RecorderOptions{})
		b.ReportAllocs()
		for b.Loop() {
			r.EpochEnd(1, 1, 10)
		}
	})
	b.Run("Power", func(b *testing.B) {
		r := NewRecorder(RecorderOptions{})
		b.ReportAllocs()
		for b.Loop() {
			r.Power(300)
		}
	})
}
