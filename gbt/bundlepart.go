package gbt

import (
	"io"
	"slices"

	"aimeter/bundle"
)

// TestPart is gbt_test.json as a raw part of a bundle: the description of
// a GB/T 45087 inference test. With it, gbt_result.json and
// gbt_inference.log are derived (package derived).
var TestPart = bundle.PartType[*Test]{Name: bundle.GBTTestFile, Read: readTestPart, Write: writeTestPart}

func readTestPart(r io.Reader) (*Test, error) {
	t, err := ReadTest(r)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func writeTestPart(w io.Writer, t *Test) error { return WriteTest(w, *t) }

// TestOf returns the GB/T test b describes; nil for an MLPerf run (or a
// malformed gbt_test.json, which derived.Read reports).
func TestOf(b *bundle.Bundle) *Test { return TestPart.Value(b) }

// SetTest makes t the GB/T test b describes; nil makes b an MLPerf run.
func SetTest(b *bundle.Bundle, t *Test) {
	if t == nil {
		TestPart.Remove(b)
		return
	}
	TestPart.Set(b, t)
}

// RunOf is the input of Evaluate for b: its GB/T description, its records
// and stage times and those of its foreign jobs.
func RunOf(b *bundle.Bundle) RunData {
	run := RunData{Test: TestOf(b), Main: runPart(b)}
	if b.Foreign != nil {
		fp := runPart(b.Foreign)
		run.Foreign = &fp
	}
	return run
}

func runPart(b *bundle.Bundle) RunPart {
	return RunPart{Records: slices.Collect(b.Result.Records()), Stages: b.StageTimes()}
}
