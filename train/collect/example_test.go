package collect_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"aimeter/train"
	"aimeter/train/collect"
)

// Two ranks of a distributed job post their training events to one
// collector (what `aimeter train --listen` serves): each first estimates its
// clock's offset, then adds events, which go out in batches.
func ExampleNewClient() {
	s := collect.NewServer(collect.Options{})
	srv := httptest.NewServer(s)
	defer srv.Close()

	ctx := context.Background()
	for rank := range 2 {
		c, err := collect.NewClient(collect.ClientOptions{URL: srv.URL, Node: fmt.Sprint("node", rank), Rank: rank})
		if err != nil {
			fmt.Println(err)
			return
		}
		if _, err := c.Sync(ctx, 4); err != nil { // 4 round trips
			fmt.Println("clock sync:", err)
			return
		}
		acc := 0.91
		for _, e := range []train.Event{
			{Kind: train.TrainStart},
			{Kind: train.EpochStart, Epoch: 1},
			{Kind: train.EpochEnd, Epoch: 1, Count: 50_000},
			{Kind: train.ValidationEnd, Epoch: 1, Value: &acc},
			{Kind: train.TrainEnd, Status: "success"},
		} {
			if err := c.Add(ctx, e); err != nil {
				fmt.Println(err)
				return
			}
		}
		if err := c.Flush(ctx); err != nil {
			fmt.Println(err)
			return
		}
	}
	st := s.Status()
	fmt.Println("events stored:", st.Events)
	for _, r := range st.Ranks {
		fmt.Printf("rank %d on %s: %d events, clock offset known: %v\n", r.Rank, r.Node, r.Events, r.HasOffset)
	}
	// Output:
	// events stored: 10
	// rank 0 on node0: 5 events, clock offset known: true
	// rank 1 on node1: 5 events, clock offset known: true
}
