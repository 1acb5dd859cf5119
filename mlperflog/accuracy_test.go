package mlperflog

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
)

func writeAccuracy(t *testing.T, entries []loadgen.AccuracyEntry) string {
	t.Helper()
	var buf bytes.Buffer
	if err := bundle.WriteAccuracyLog(&buf, entries); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The example of loadgen-reference §10.3.
func TestAccuracyLayout(t *testing.T) {
	got := writeAccuracy(t, []loadgen.AccuracyEntry{
		{SeqID: 0, QSLIndex: 22, Data: []byte{0x16, 0xC0, 0xB0, 0xA0}},
		{SeqID: 1, QSLIndex: 5, Data: []byte{0x05, 0xC0, 0xB0, 0xA0}, TokenData: []byte{0x05, 0xC0}, TokenCount: 7, HasTokens: true},
	})
	want := `[
{ "seq_id" : 0, "qsl_idx" : 22, "data" : "16C0B0A0" },
{ "seq_id" : 1, "qsl_idx" : 5, "data" : "05C0B0A0", "token_data" : "05C0", "token_count" : 7 }
]
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// TEST01's --unixmode greps this exact spacing.
	if !strings.Contains(got, `"qsl_idx" : 22,`) {
		t.Error(`no "qsl_idx" : 22,`)
	}
}

func TestAccuracyEmpty(t *testing.T) {
	if got := writeAccuracy(t, nil); got != "[\n]\n" {
		t.Errorf("empty log = %q, want %q", got, "[\n]\n")
	}
}

func TestAccuracyTokenVariants(t *testing.T) {
	got := writeAccuracy(t, []loadgen.AccuracyEntry{
		// Offline token mode: token_count only.
		{SeqID: 9, QSLIndex: 1, Data: []byte{0xAB}, TokenCount: 3, HasTokens: true},
		// Non-Offline with an empty first-token response: token_data "".
		{SeqID: 10, QSLIndex: 2, Data: []byte{}, TokenData: []byte{}, TokenCount: 2, HasTokens: true},
	})
	want := "[\n" +
		`{ "seq_id" : 9, "qsl_idx" : 1, "data" : "AB", "token_count" : 3 },` + "\n" +
		`{ "seq_id" : 10, "qsl_idx" : 2, "data" : "", "token_data" : "", "token_count" : 2 }` +
		"\n]\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestAccuracyGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := bundle.WriteAccuracyLog(&buf, accuracyOnly(t).Accuracy); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "accuracy.accuracy.json", buf.Bytes())
}

// Large responses go through the chunked hex writer intact, and the file is
// JSON the accuracy scripts can load.
func TestAccuracyLargeEntryIsValidJSON(t *testing.T) {
	data := make([]byte, 100_003)
	for i := range data {
		data[i] = byte(i * 7)
	}
	got := writeAccuracy(t, []loadgen.AccuracyEntry{{SeqID: 1, QSLIndex: 2, Data: data}, {SeqID: 2, QSLIndex: 3, Data: data[:1]}})
	var parsed []struct {
		SeqID  uint64 `json:"seq_id"`
		QSLIdx uint64 `json:"qsl_idx"`
		Data   string `json:"data"`
	}
	if err := json.Unmarshal([]byte(got), &parsed); err != nil {
		t.Fatal(err)
	}
	if len(parsed) != 2 || parsed[0].Data != strings.ToUpper(hex.EncodeToString(data)) || parsed[1].Data != strings.ToUpper(hex.EncodeToString(data[:1])) {
		t.Error("hex data does not round-trip")
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errShortWrite
	}
	return len(p), nil
}

var errShortWrite = bytes.ErrTooLarge

func TestAccuracyWriteError(t *testing.T) {
	entries := make([]loadgen.AccuracyEntry, 10000)
	if err := bundle.WriteAccuracyLog(&failWriter{n: 1000}, entries); err == nil {
		t.Error("no error from a failing writer")
	}
}
