package mlperflog

import "strings"

// fileIssueQuery is LoadGen's issue_query_controller.cc, where the
// messages that end a Server pass are logged.
const fileIssueQuery = "issue_query_controller.cc"

// sourceLine returns the metadata "file" and "line_no" of an entry: the
// file and line of LoadGen's sources (6.0.17) at which LoadGen logs the same
// key, so that an entry can be looked up there. Keys logged at several
// places (generic_message, error_runtime, …) are told apart by their
// message; keys built at run time (result_50.00_percentile_latency_ns) by
// their form. An entry LoadGen has no counterpart for keeps file and gets
// line 0.
func sourceLine(file, key string, value any) (string, int) {
	msg, _ := value.(string)
	switch key {
	case "generic_message", "error_runtime", "warning_generic_message":
		// The messages of the keys LoadGen logs at several places, with
		// the place of each (text is a part that identifies the message).
		messages := [...]struct {
			key, text, file string
			line            int
		}{
			{"generic_message", "FindBoundaries: Checking fields", fileLoadgen, 758},
			{"generic_message", "Starting performance mode", fileLoadgen, 848},
			{"generic_message", "Starting FindPeakPerformance mode", fileLoadgen, 954},
			{"generic_message", "FindPeakPerformance: Check validity of the base settings field", fileLoadgen, 976},
			{"generic_message", "FindPeakPerformance: Found boundaries", fileLoadgen, 1050},
			{"generic_message", "FindPeakPerformance: Found peak performance field", fileLoadgen, 1075},
			{"generic_message", "Starting accuracy mode", fileLoadgen, 1101},
			{"generic_message", "Ending naturally: Minimum query count and test duration met.", fileIssueQuery, 482},
			{"error_runtime", "Ending early: Ran out of generated queries", fileLoadgen, 513},
			{"error_runtime", "FindPeakPerformance: Initial lower bound does not satisfy", fileLoadgen, 1010},
			{"error_runtime", "Ending early: Too many outstanding queries.", fileIssueQuery, 465},
			{"error_runtime", "Ending early: Max query count reached.", fileIssueQuery, 504},
			{"error_runtime", "Ending early: Max test duration reached.", fileIssueQuery, 524},
			{"warning_generic_message", "Found Audit Config file (audit.config).", fileLoadgen, 1235},
			{"warning_generic_message", "Test05 flag detected", fileLoadgen, 1256},
		}
		for _, m := range messages {
			if m.key == key && strings.Contains(msg, m.text) {
				return m.file, m.line
			}
		}
		return file, 0
	}
	if file == fileResults && strings.HasPrefix(key, "result_") {
		switch {
		case strings.HasSuffix(key, "_percentile_per_query_latency_ns"):
			return file, 724
		case strings.HasPrefix(key, "result_first_token_") && strings.HasSuffix(key, "_percentile_latency_ns"):
			return file, 793
		case strings.HasPrefix(key, "result_time_per_output_token_"):
			return file, 805
		case strings.HasSuffix(key, "_percentile_latency_ns"):
			return file, 778
		}
	}
	return file, staticSourceLine(file, key)
}
