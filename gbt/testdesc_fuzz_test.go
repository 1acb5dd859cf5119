package gbt

import (
	"bytes"
	"os"
	"testing"
)

// ReadTest and ReadResultFile never panic, and what they accept writes back
// to a file they read to the same value.
func FuzzReadTestAndResult(f *testing.F) {
	if b, err := os.ReadFile(goldenResultPath); err == nil {
		f.Add(b)
	}
	var buf bytes.Buffer
	run := evalRun()
	if err := WriteTest(&buf, *run.Test); err == nil {
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"format":"aimeter-gbt-test/1","arrival":{"mode":7}}`))
	f.Add([]byte(`{"format":"aimeter-gbt-result/2","metrics":{"loss":{"lost_samples":-1}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if tt, err := ReadTest(bytes.NewReader(b)); err == nil {
			var out bytes.Buffer
			if err := WriteTest(&out, tt); err != nil {
				return // e.g. a lifecycle time that does not encode
			}
			again, err := ReadTest(bytes.NewReader(out.Bytes()))
			var out2 bytes.Buffer
			if err != nil || WriteTest(&out2, again) != nil || !bytes.Equal(out.Bytes(), out2.Bytes()) {
				t.Fatalf("test description not stable: %v\n%s\n%s", err, out.Bytes(), out2.Bytes())
			}
		}
		if r, err := ReadResultFile(bytes.NewReader(b)); err == nil {
			var out bytes.Buffer
			if err := WriteResultFile(&out, r); err != nil {
				return
			}
			again, err := ReadResultFile(bytes.NewReader(out.Bytes()))
			var out2 bytes.Buffer
			if err != nil || WriteResultFile(&out2, again) != nil || !bytes.Equal(out.Bytes(), out2.Bytes()) {
				t.Fatalf("result file not stable: %v\n%s\n%s", err, out.Bytes(), out2.Bytes())
			}
		}
	})
}
