package merge_test

import (
	"context"
	"fmt"
	"log"

	"aimeter/derived"
	"aimeter/merge"
	"aimeter/shard"
)

// Merge the bundles of a test's four shards (aimeter run --shard I/4, one
// directory each) into the whole test's bundle, and print its verdict and
// each shard's figures.
func Example() {
	dirs := []string{"results/shard-0", "results/shard-1", "results/shard-2", "results/shard-3"}
	b, err := merge.Write(context.Background(), dirs, "results/merged", merge.Options{})
	if err != nil {
		log.Fatal(err) // a *merge.ShardError names the shard refused
	}
	v, err := derived.Of(b).Verdict()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the test is", v.Word())
	for _, s := range shard.MergeOf(b).Shards {
		fmt.Printf("shard %d: %d records, %.0f samples/s, p99 %d ns, clock offset %d ns\n",
			s.Index, s.Records, s.SamplesPerSecond, s.LatencyP99Ns, s.ClockOffsetNs)
	}
}
