// Package testinfo is the test information of GB/T 45087-2024 that the
// tested party provides for an inference test (6.1 a), 7.1 a)) and its
// automatic detection (7.7.1 a)).
//
// [Info] carries fields 1)–20) of 6.1 a) (GB-6.1-a-1 … GB-6.1-a-20) and
// the sparsification and quantization declarations of 7.1 a) (GB-7.1-a-1,
// GB-7.1-a-2); the training-only fields 21)–25) are left out (IN-38). It is
// read from YAML by [Load] in strict mode: an unknown key is an error that
// names its line. The standard says the information includes "but is not
// limited to" these fields (GB-6.1-a), so additional facts go under the
// free-form "extra" key rather than at the top level, where a misspelt key
// must not pass silently. Coded fields (test mode, scenario class, …) accept
// the standard's numeric code or a name ("closed", "open", …); their Go zero
// value means "not given", so [Merge] can let a manual value override a
// detected one field by field (GB-7.7.1-a). [Info.Validate] names every
// missing or inconsistent field with its requirement ID; the check of a
// model number against the scenario catalogue (IN-07) is passed in, and
// gbt.ValidateInfo passes the catalogue of Tables 11–14.
//
// # Detection (detect.go)
//
// Package sysinfo reads the CPU, memory, accelerators, operating system,
// kernel, container and virtual-machine facts of the machine; [FromHost]
// turns them into an [Info] to merge with the tested party's YAML, and
// [Detect] does both for the machine it runs on.
//
// Requirement IDs (GB-…) and implementer's notes (IN-nn) cited in this
// package are indexed in docs/requirements.md.
package testinfo
