package scrape_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"aimeter/scrape"
)

// Parse an exposition as a vLLM server sends it.
func ExampleParse() {
	samples, err := scrape.Parse(`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 3
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{model_name="m",le="0.1"} 4
vllm:time_to_first_token_seconds_bucket{model_name="m",le="+Inf"} 5
vllm:time_to_first_token_seconds_sum{model_name="m"} 0.5
vllm:time_to_first_token_seconds_count{model_name="m"} 5
`, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range samples {
		fmt.Println(s.Name, s.Labels, s.Value)
	}
	// Output:
	// vllm:num_requests_running map[model_name:m] 3
	// vllm:time_to_first_token_seconds_count map[model_name:m] 5
	// vllm:time_to_first_token_seconds_sum map[model_name:m] 0.5
}

// Scrape a server while something runs, then read its running requests.
func ExampleStart() {
	requests := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "sglang:num_running_reqs 7")
		requests <- struct{}{}
	}))
	defer srv.Close()

	start := time.Now() // the run's start
	s, err := scrape.Start(context.Background(), scrape.Options{Targets: []string{srv.URL + "/metrics"}, Interval: 10 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The run; here, until the second scrape has begun, so that the
	// first has ended whatever the machine's speed.
	<-requests
	<-requests
	s.SetOrigin(start)
	m, _ := s.Stop(context.Background())
	for _, series := range scrape.Known(m) {
		fmt.Println(series.Quantity, series.Server, series.Metric, series.Points[0].Value)
	}
	// Output:
	// running requests SGLang sglang:num_running_reqs 7
}
