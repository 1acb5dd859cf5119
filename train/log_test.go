package train

import (
	"aimeter/internal/golden"
	"bytes"
	"errors"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// golden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

var (
	// epochLineRE is IN-19's pattern with the colon of IN-17 only.
	epochLineRE = regexp.MustCompile(`^\[\d{4}:\d{2}:\d{2} \d{2}:\d{2}:\d{2}\]-\[[1-9]\d*\]-\[[1-9]\d*\]-\[(--|[-+]?\d+(\.\d+)?)\]$`)
	// generationLineRE is IN-81's pattern.
	generationLineRE = regexp.MustCompile(`^\[(\d{4}:\d{2}:\d{2} \d{2}:\d{2}:\d{2})?\]-\[(\d{4}:\d{2}:\d{2} \d{2}:\d{2}:\d{2})?\]-\[\d+\]-\[\d+\]$`)
	origin           = time.Date(2024, 11, 28, 9, 30, 0, 0, time.UTC)
)

func TestFormatLines(t *testing.T) {
	acc := 0.75123
	ts := time.Date(2024, 11, 28, 14, 5, 9, 999e6, time.UTC)
	end := ts.Add(2 * time.Second)
	cases := []struct {
		reason, got, want string
		re                *regexp.Regexp
	}{
		{"IN-17's canonical line; seconds truncated, 4 decimals", FormatEpochLine(ts, 2, 17, &acc), "[2024:11:28 14:05:09]-[2]-[17]-[0.7512]", epochLineRE},
		{"unknown accuracy is --", FormatEpochLine(ts, 1, 1, nil), "[2024:11:28 14:05:09]-[1]-[1]-[--]", epochLineRE},
		{"trial 0 is written 1 (IN-19)", FormatEpochLine(ts, 0, 3, nil), "[2024:11:28 14:05:09]-[1]-[3]-[--]", epochLineRE},
		{"initial model: empty times, generation 0 (IN-81)", FormatGenerationLine(nil, nil, 0, 138), "[]-[]-[0]-[138]", generationLineRE},
		{"a mutation with both times", FormatGenerationLine(&ts, &end, 4, 2048), "[2024:11:28 14:05:09]-[2024:11:28 14:05:11]-[4]-[2048]", generationLineRE},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.reason, c.got, c.want)
		}
		if !c.re.MatchString(c.got) {
			t.Errorf("%s: %q does not match the spec's pattern", c.reason, c.got)
		}
	}
}

func TestWriteLogGolden(t *testing.T) {
	opts := LogOptions{Location: time.UTC, Origin: origin}
	var buf bytes.Buffer
	if err := WriteLog(&buf, singleNode(), opts); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "single.log", buf.Bytes())

	// Two trials of an AutoML run on two ranks: the initial model
	// (generation 0) trains 2 epochs, mutation 1 then trains 1 epoch; epoch
	// numbers restart per generation; trial 2 has no accuracy for epoch 1.
	var ev2 []Event
	for tr := 1; tr <= 2; tr++ {
		b := float64(tr-1) * 60000
		x := inTrial(tr)
		ev2 = append(ev2,
			ev(GenerationEnd, b, x, num(0), count(138)),
			ev(EpochStart, b+1000, x, num(1)), ev(EpochStart, b+1000, x, num(1), onRank(1)),
			ev(EpochEnd, b+2000, x, num(1)), ev(EpochEnd, b+3500, x, num(1), onRank(1)),
			ev(EpochStart, b+4000, x, num(2)), ev(EpochEnd, b+5000, x, num(2)),
			ev(ValidationStart, b+5000, x, num(2)), ev(ValidationEnd, b+6100, x, num(2), val(0.6)),
			ev(GenerationStart, b+7000, x, num(1)), ev(GenerationEnd, b+9000, x, num(1), count(266)),
			ev(EpochStart, b+9000, x, num(1)), ev(EpochEnd, b+10000, x, num(1)),
			ev(ValidationStart, b+10000, x, num(1)), ev(ValidationEnd, b+10500, x, num(1), val(0.71)),
		)
		if tr == 1 {
			ev2 = append(ev2, ev(ValidationStart, b+2000, x, num(1)), ev(ValidationEnd, b+2500, x, num(1), val(0.4)))
		}
	}
	buf.Reset()
	if err := WriteLog(&buf, ev2, opts); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "automl.log", buf.Bytes())
	for _, l := range bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n")) {
		if !epochLineRE.Match(l) && !generationLineRE.Match(l) {
			t.Errorf("line %q matches neither pattern", l)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteLogError(t *testing.T) {
	err := WriteLog(failWriter{}, singleNode(), LogOptions{})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("disk full")) {
		t.Errorf("error %v", err)
	}
}
