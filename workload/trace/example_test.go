package trace_test

import (
	"fmt"
	"strings"

	"aimeter/workload/trace"
)

// A Mooncake trace replayed twice as fast: the schedule for
// loadgen.Options.Arrivals and ArrivalSamples, and one prompt per request
// whose shared hash ids give a shared prefix.
func Example() {
	const jsonl = `{"timestamp": 0, "input_length": 600, "output_length": 20, "hash_ids": [0, 1]}
{"timestamp": 40, "input_length": 512, "output_length": 8, "hash_ids": [0]}
`
	tr, err := trace.Parse(strings.NewReader(jsonl), "example.jsonl", trace.Mooncake)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tr.Schedule(trace.ScheduleOptions{Speedup: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := s.Prompts(tr.Name, trace.PromptOptions{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	a, b := set.Prompt(0), set.Prompt(1)
	fmt.Println("arrivals (ns):", s.Arrivals, "samples:", s.Samples())
	fmt.Println("max_tokens:", a.MaxTokens, b.MaxTokens)
	fmt.Println("request 1 is a prefix of request 0:", strings.HasPrefix(a.Text, b.Text))
	// Output:
	// arrivals (ns): [0 20000000] samples: [0 1]
	// max_tokens: 20 8
	// request 1 is a prefix of request 0: true
}
