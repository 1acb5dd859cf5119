package dispatch_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"aimeter/dataset/prompts"
	"aimeter/loadgen"
	"aimeter/serve"
	"aimeter/sut/dispatch"
	"aimeter/sut/netsut"
	"aimeter/sut/openai"
)

// One Offline test spread round robin over two OpenAI-compatible servers
// (aimeter's simulator, twice): the SUT's name gathers the nodes' names,
// every sample records the node that served it, and each node keeps its
// own counters.
func ExampleNew() {
	set, err := prompts.Synthetic(prompts.SyntheticOptions{Count: 16, InputWords: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	var nodes []netsut.Endpoint
	for _, name := range []string{"alpha", "beta"} {
		sim, err := serve.NewOpenAI(serve.OpenAIOptions{Models: []string{name}})
		if err != nil {
			fmt.Println(err)
			return
		}
		srv := httptest.NewServer(sim)
		defer func() { srv.Close(); sim.Close() }()
		ep, err := openai.New(openai.Options{BaseURL: srv.URL, MaxTokens: 4, Prompts: set})
		if err != nil {
			fmt.Println(err)
			return
		}
		nodes = append(nodes, ep)
	}
	d, err := dispatch.New(nodes, dispatch.Options{Policy: dispatch.RoundRobin})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := d.Check(ctx); err != nil { // every node, before the run
		fmt.Println(err)
		return
	}
	sut := netsut.New(ctx, d, netsut.Options{})
	defer sut.Close()

	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 40
	res, err := loadgen.Run(ctx, sut, set, s, nil)
	if err != nil {
		fmt.Println("run failed:", err)
		return
	}
	perNode := map[uint32]int{}
	for rec := range res.Records() {
		perNode[rec.Node]++
	}
	fmt.Println("valid:", res.Summary.Valid)
	for _, n := range d.Stats() {
		fmt.Printf("node %d: %d requests, %d ok, %d samples in the records\n", n.Number, n.Sent, n.OK, perNode[uint32(n.Number)])
	}
	// Output:
	// valid: true
	// node 1: 20 requests, 20 ok, 20 samples in the records
	// node 2: 20 requests, 20 ok, 20 samples in the records
}
