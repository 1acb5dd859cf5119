package mlperflog

import (
	"bytes"
	"strings"
	"testing"
)

// summaryKeys reads a summary as a checker does: every "key : value" line.
func summaryKeys(b []byte) map[string]string {
	keys := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " : "); ok {
			keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return keys
}

// TestWriteSummaryNote checks that a note appended to every fixture's
// summary leaves LoadGen's content byte for byte as it was (and as its
// golden file holds it), follows it in its own framed block, and adds no
// "key : value" line a checker would read.
func TestWriteSummaryNote(t *testing.T) {
	const note = "This run is a GB/T 45087 inference test (arrival mode 3, peak).\nLoadGen's VALID/INVALID above is not the verdict of a GB/T test."
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			r := f.build(t)
			var plain, noted bytes.Buffer
			if err := WriteSummary(&plain, r); err != nil {
				t.Fatal(err)
			}
			if err := WriteSummary(&noted, r); err != nil {
				t.Fatal(err)
			}
			if err := WriteSummaryNote(&noted, note); err != nil {
				t.Fatal(err)
			}
			head, tail, ok := bytes.Cut(noted.Bytes(), []byte("\n"+banner+"\n"+SummaryNoteTitle+"\n"+banner+"\n"))
			if !ok {
				t.Fatalf("no note block in\n%s", noted.Bytes())
			}
			if !bytes.Equal(head, plain.Bytes()) || !bytes.HasPrefix(noted.Bytes(), plain.Bytes()) {
				t.Error("LoadGen's part of the summary changed")
			}
			if string(tail) != note+"\n" {
				t.Errorf("note %q, want %q", tail, note+"\n")
			}
			a, b := summaryKeys(plain.Bytes()), summaryKeys(noted.Bytes())
			if len(a) != len(b) {
				t.Errorf("the note added keys: %d before, %d after", len(a), len(b))
			}
			for k, v := range a {
				if b[k] != v {
					t.Errorf("key %q: %q, after the note %q", k, v, b[k])
				}
			}
		})
	}
}

func TestWriteSummaryNoteGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, serverInvalid(t)); err != nil {
		t.Fatal(err)
	}
	note := "This run is a GB/T 45087 inference test (arrival mode 2, poisson).\nIts verdict is the loss-rate verdict in gbt_result.json (GB-7.7.1-c-2, IN-79): PASS, 0 of 1000 samples lost (loss rate 0%, permissible 1%).\nLoadGen's VALID/INVALID above is not the verdict of a GB/T test, and its recommendations are no advice for one.\n"
	if err := WriteSummaryNote(&buf, note); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "server_invalid_gbt_note.summary.txt", buf.Bytes())
}

func TestWriteSummaryNoteEdges(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
		err              bool
		reason           string
	}{
		{"empty", "", "", false, "no note, nothing written: a plain run's summary stays LoadGen's"},
		{"only newlines", "\n\n", "", false, "a blank note is no note"},
		{"trailing newline", "a\n", "\n" + banner + "\n" + SummaryNoteTitle + "\n" + banner + "\na\n", false, "one final newline, not two"},
		{"key separator", "Result is : VALID", "", true, "a line a checker would read as a LoadGen key is refused"},
	} {
		var buf bytes.Buffer
		err := WriteSummaryNote(&buf, tc.text)
		if (err != nil) != tc.err || buf.String() != tc.want {
			t.Errorf("%s: wrote %q, error %v; want %q, error %v: %s", tc.name, buf.String(), err, tc.want, tc.err, tc.reason)
		}
	}
}
