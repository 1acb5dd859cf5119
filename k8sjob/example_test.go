package k8sjob_test

import (
	"fmt"
	"strings"
	"time"

	"aimeter/k8sjob"
)

// A test across 8 nodes against a vLLM service, starting two minutes
// from now; the bundles go to the PersistentVolumeClaim aimeter-results.
func Example() {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	job, err := k8sjob.Build(k8sjob.Options{
		Name:    "bench-8",
		Image:   "registry.example/aimeter:0.1.0",
		Shards:  8,
		StartAt: now.Add(2 * time.Minute),
		Now:     now,
		PVC:     "aimeter-results",
		RunArgs: []string{"--sut", "openai", "--url", "http://vllm:8000", "--scenario", "Server", "--set", "target_qps=800"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	spec := job.Spec
	fmt.Println(*spec.CompletionMode, *spec.Parallelism, *spec.Completions, *spec.BackoffLimit)
	fmt.Println(strings.Join(spec.Template.Spec.Containers[0].Args, " "))
	y, err := k8sjob.Marshal(job, "aimeter k8s job …")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s", y[:strings.Index(string(y), "metadata:")])
	// Output:
	// Indexed 8 8 0
	// run --shards 8 --start-at 2026-11-29T12:02:00Z --output-dir /results/shard-$(JOB_COMPLETION_INDEX) --no-store --sut openai --url http://vllm:8000 --scenario Server --set target_qps=800
	// # aimeter k8s job …
	// apiVersion: batch/v1
	// kind: Job
}
