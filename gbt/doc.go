// Package gbt holds what aimeter adds to MLPerf LoadGen for GB/T 45087-2024
// ("Artificial intelligence — Performance testing methods for server
// systems") inference tests: the arrival modes of Table 10 and their
// schedules ([Arrival]), the metrics of 7.6 (time breakdown, throughput,
// effective computing power, elasticity, pressure tolerance, video streams,
// job loss), the check of the test information against the catalogue (the
// information itself is package testinfo), the inference scenario catalogue
// (Tables 10–14), the periodic inference log (7.3 f)), the lifecycle events
// (7.7.1 j) 1)) and the result file gbt_result.json (7.3).
//
// Requirement IDs (GB-…) and implementer's notes (IN-nn) cited in this
// package are indexed in docs/requirements.md.
//
// # A test as library calls (plan.go, evaluate.go, testdesc.go)
//
// [NewRunPlan] turns a [PlanInput] (the arrival, the mode-5 foreign workload, the
// timeout class, the loss threshold) and the user's LoadGen settings into a
// [RunPlan]: the loadgen.Settings and the Arrivals and SampleTimeout options
// that carry the test, the offsets it scheduled with their hash (IN-53), and
// the test's description [Test]. A setting the user chose that the mode sets
// otherwise is a [ConflictError] naming both. After loadgen.Run, the caller
// completes the [Test] (test information, lifecycle, start and end of the
// run) and calls [Evaluate] with one [RunData] (the description, the
// records and the stage times joined by sequence id, and a mixed test's
// foreign jobs); it returns typed [Metrics]. [NewResultFile] and [WriteResultFile] write
// gbt_result.json and [WriteInferenceLog] the 7.3 f) log: both are pure
// functions of the description (stored as gbt_test.json by [WriteTest]) and
// the records, so a stored run regenerates them byte for byte.
//
// # Test information (package testinfo, infocheck.go)
//
// The test information of 6.1 a) and 7.1 a) (GB-6.1-a, GB-7.1-a) and its
// automatic detection (GB-7.7.1-a) are package aimeter/gbt/testinfo:
// testinfo.Info, its coded fields, precisions, timestamps and capacities,
// testinfo.Load, testinfo.Merge and testinfo.Detect. [ValidateInfo] validates
// it as testinfo.Info.Validate does and checks a closed-mode model number
// against the catalogue below (IN-07).
//
// # Scenario catalogue (catalogue.go)
//
// [Catalogue] lists the inference scenarios of Tables 11–14 as data, and
// [ArrivalModes] the six arrival modes of Table 10 with their timeout-control
// thresholds; [Timeout] gives t*_OUT for a mode and threshold column
// (IN-63), and [TimeoutClassFor] picks the column from a model name through
// the normalisation map of IN-52.
//
// # Inference log (log.go)
//
// [LogLine] formats one line of the 7.3 f) log,
// "[yyyy:MM:dd HH:mm:ss]-[accuracy]-[jobs]-[samples]-[lost]", and
// [WriteInferenceLog] writes one for each second of a run (IN-43) and a
// final one, from the records; its cumulative accuracy comes from the
// online score stored in [Test].Correct ("--" without one).
//
// # Results (result.go)
//
// [ResultFile] is gbt_result.json: the test information (GB-7.3-a), the
// arrival mode and its parameters (GB-7.3-b), the precision actually used
// (GB-7.3-c), accuracy and every metric (GB-7.3-d), the lifecycle events
// (GB-7.7.1-j-1), the schedule seed and hash (IN-53) and notes.
// [WriteResultFile] writes it as indented JSON in a fixed key order;
// [Lifecycle] records the events with an injectable clock.
package gbt
