package console

import (
	"strings"
	"testing"

	"aimeter/gbt"
)

func TestWriteECP(t *testing.T) {
	res := gbt.ECPResult{Value: 123.456789, Alpha: 100, Ratios: []gbt.ECPRatio{
		{Name: "poisson", Weight: 0.5, Throughput: 1234.5, Baseline: 1000, Ratio: 1.2345},
		{Name: "fixed-period", Weight: 0.5, Throughput: 50, Baseline: 40, Ratio: 1.25},
	}}
	var b strings.Builder
	WriteECPTable(&b, res)
	WriteECPValue(&b, res)
	want := "scenario      weight  throughput  baseline  ratio\n" +
		"poisson       0.5     1234        1000      1.2345\n" +
		"fixed-period  0.5     50          40        1.2500\n" +
		"Effective computing power: 123.4568 (α = 100)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
