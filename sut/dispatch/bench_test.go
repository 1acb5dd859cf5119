package dispatch

import (
	"context"
	"testing"

	"aimeter/loadgen"
	"aimeter/sut/netsut"
)

// nopEndpoint answers every request at once, so that the benchmark
// measures the dispatcher alone.
type nopEndpoint struct{}

func (nopEndpoint) Do(context.Context, *loadgen.Responder, loadgen.QuerySample, *loadgen.Response) {}
func (nopEndpoint) Check(context.Context) error                                                    { return nil }
func (nopEndpoint) Name() string                                                                   { return "nop" }
func (nopEndpoint) Close() error                                                                   { return nil }

// BenchmarkDo is the dispatcher's cost per request over 8 nodes, from
// parallel goroutines: choosing the node and counting the request must
// allocate nothing.
func BenchmarkDo(b *testing.B) {
	for _, p := range []Policy{RoundRobin, LeastOutstanding} {
		b.Run(p.String(), func(b *testing.B) {
			eps := make([]netsut.Endpoint, 8)
			for i := range eps {
				eps[i] = nopEndpoint{}
			}
			d, err := New(eps, Options{Policy: p})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var resp loadgen.Response
				for pb.Next() {
					d.Do(ctx, nil, loadgen.QuerySample{ID: 1}, &resp)
				}
			})
		})
	}
}

func TestDoAllocatesNothing(t *testing.T) {
	d, err := New([]netsut.Endpoint{nopEndpoint{}, nopEndpoint{}}, Options{Policy: LeastOutstanding})
	if err != nil {
		t.Fatal(err)
	}
	var resp loadgen.Response
	if n := testing.AllocsPerRun(1000, func() { d.Do(context.Background(), nil, loadgen.QuerySample{ID: 1}, &resp) }); n != 0 {
		t.Errorf("Do allocates %v times per request, want 0", n)
	}
}
