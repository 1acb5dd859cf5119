package openai_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"aimeter/dataset/prompts"
	"aimeter/loadgen"
	"aimeter/serve"
	"aimeter/sut/netsut"
	"aimeter/sut/openai"
)

// A whole Offline test against an OpenAI-compatible server, here aimeter's
// own simulator on loopback: 8 output tokens per answer, streamed, so that
// every sample has its token arrival times.
func ExampleNew() {
	out, _ := serve.ParseLengthDist("8")
	sim, err := serve.NewOpenAI(serve.OpenAIOptions{Models: []string{"sim"}, OutputTokens: out, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(sim)
	defer func() { srv.Close(); sim.Close() }()

	set, err := prompts.Synthetic(prompts.SyntheticOptions{Count: 16, InputWords: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	ep, err := openai.New(openai.Options{BaseURL: srv.URL, Stream: true, MaxTokens: 8, Prompts: set})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	// Check asks the server for its models (GET /v1/models) before the
	// run: a server that is down fails here, not as lost samples.
	if err := ep.Check(ctx); err != nil {
		fmt.Println("server not usable:", err)
		return
	}
	sut := netsut.New(ctx, ep, netsut.Options{})
	defer sut.Close()

	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 64
	res, err := loadgen.Run(ctx, sut, set, s, nil)
	if err != nil {
		fmt.Println("run failed:", err)
		return
	}
	streams := 0
	for _, times := range res.TokenTimes() {
		if len(times) == 8 {
			streams++
		}
	}
	st := ep.Stats()
	fmt.Println("valid:", res.Summary.Valid)
	fmt.Println("samples:", res.RecordCount(), "failed:", res.FailedSamples)
	fmt.Println("samples with 8 token times:", streams)
	fmt.Println("requests:", st.Requests, "errors:", st.Errors)
	// Output:
	// valid: true
	// samples: 64 failed: 0
	// samples with 8 token times: 64
	// requests: 64 errors: 0
}
