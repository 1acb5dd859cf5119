package bundle

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
)

func TestStagesRoundTrip(t *testing.T) {
	recs := []loadgen.Record{{SeqID: 3}, {SeqID: 4}}
	a := loadgen.NoStages
	a.Received, a.InferenceStart, a.InferenceEnd, a.Node = 100, 110, 150, 2
	b := loadgen.NoStages
	b.Clock, b.Received, b.ResultSent = loadgen.SUTClock, 0, 42
	var buf bytes.Buffer
	if err := WriteStages(&buf, slices.Values(recs), slices.Values([]loadgen.StageTimes{a, b})); err != nil {
		t.Fatal(err)
	}
	want := StagesHeader + "\n3,test,2,100,,,110,150,,,\n4,sut,0,0,,,,,,,42\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
	seqs, got, err := ReadStages(&buf)
	if err != nil || !slices.Equal(seqs, []uint64{3, 4}) || got[0] != a || got[1] != b {
		t.Fatalf("read back %v %+v %v", seqs, got, err)
	}
	for _, bad := range []string{"x\n", StagesHeader + "\n1,moon,0,,,,,,,,\n", StagesHeader + "\n1,test,0,1\n", StagesHeader + "\n1,test,0,x,,,,,,,\n"} {
		if _, _, err := ReadStages(strings.NewReader(bad)); err == nil {
			t.Errorf("%q must be rejected", bad)
		}
	}
	if err := WriteStages(&buf, slices.Values(recs), slices.Values([]loadgen.StageTimes{a})); err == nil {
		t.Error("fewer stage rows than records is an error")
	}
}
