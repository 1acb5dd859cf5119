package derived

import (
	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/sut/null"
	"context"
	"strconv"
	"strings"
	"testing"
)

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g := strings.Split(string(got), "\n")
	w := strings.Split(string(want), "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + strconv.Quote(gl) + "\nwant: " + strconv.Quote(wl)
		}
	}
	return "(no line differs)"
}

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
