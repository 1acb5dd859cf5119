package derived

import (
	"aimeter/bandwidth"
	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/shard"
	"aimeter/sysdesc"
	"aimeter/telemetry"
	"aimeter/train/trainbundle"
)

// Parts lists every raw part of a bundle that a package above bundle
// defines: the GB/T test's description, how the run was asked for, its
// telemetry, a training run, a shard's shard.json, a merged test's
// merge.json (docs/sharding.md), the bandwidth check's declaration and the
// system description (with the run's MLPerf division).
func Parts() []bundle.Part {
	return []bundle.Part{gbt.TestPart, invocation.Part, telemetry.LogPart, trainbundle.Part, shard.Part, shard.MergePart, bandwidth.Part, sysdesc.Part}
}

// Read is bundle.Read that also decodes every part of Parts, so that a
// malformed one is an error naming its file, as bundle.Read's own files
// are.
func Read(dir string) (*bundle.Bundle, error) { return ReadWith(dir, bundle.ReadOptions{}) }

// ReadWith is bundle.ReadWith with Parts checked as well as any opts
// names.
func ReadWith(dir string, opts bundle.ReadOptions) (*bundle.Bundle, error) {
	opts.Parts = append(Parts(), opts.Parts...)
	return bundle.ReadWith(dir, opts)
}
