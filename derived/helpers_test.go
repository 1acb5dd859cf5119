package derived

import (
	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/sut/null"
	"context"
	"testing"
)

// writeRunDir writes a real run of sut with settings s, with every derived
// file, into a new directory and returns it.
func writeRunDir(t testing.TB, sut loadgen.SUT, s loadgen.Settings) string {
	t.Helper()
	res, err := loadgen.Run(context.Background(), sut, null.QSL{Total: 256}, s, &loadgen.Options{SpinWindow: -1})
	if res == nil {
		t.Fatalf("Run: %v", err)
	}
	dir := t.TempDir()
	if err := Write(dir, &bundle.Bundle{Result: res, Version: "test", Trace: true}); err != nil {
		t.Fatal(err)
	}
	return dir
}
