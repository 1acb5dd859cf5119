package invocation

import (
	"bytes"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/sut"
)

// invocation.json round-trips through a bundle's part; an unknown field is
// an error naming the file; Set(nil) removes it.
func TestPart(t *testing.T) {
	inv := &Invocation{CommandLine: []string{"run"}, SUT: sut.Config{Kind: sut.NullAsync, QSLSize: 7},
		GBT: &gbt.PlanInput{}, Settings: bundle.SettingsInput{Model: "m"}}
	var buf bytes.Buffer
	if err := Write(&buf, inv); err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil || back.SUT.QSLSize != 7 || back.Settings.Model != "m" || back.GBT == nil {
		t.Fatalf("read back %+v, %v", back, err)
	}
	var again bytes.Buffer
	if err := Write(&again, back); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Errorf("written again:\n%s\nwant\n%s", again.Bytes(), buf.Bytes())
	}
	if _, err := Read(strings.NewReader(`{"sut": {}, "nonsense": 1}`)); err == nil || !strings.Contains(err.Error(), bundle.InvocationFile) {
		t.Errorf("an unknown field: %v", err)
	}
	b := &bundle.Bundle{}
	Set(b, inv)
	if Of(b) != inv {
		t.Error("Of does not return what Set set")
	}
	Set(b, nil)
	if Of(b) != nil || Part.Has(b) {
		t.Error("Set(nil) left the part")
	}
}
