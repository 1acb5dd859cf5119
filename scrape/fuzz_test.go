package scrape

import (
	"os"
	"testing"
)

// FuzzParse feeds Parse arbitrary bodies, as a broken or hostile endpoint
// could send: it must return samples or an error, never panic, and every
// sample it returns has a name.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/vllm.txt"); err == nil {
		f.Add(string(b), false)
		f.Add(string(b), true)
	}
	f.Add("# TYPE s summary\ns{quantile=\"0.5\"} 9\ns_sum 20\ns_count 2\n", true)
	f.Add("a{b=\"\\n\"} NaN 123\n# EOF\n", false)
	f.Fuzz(func(t *testing.T, text string, buckets bool) {
		samples, err := Parse(text, buckets)
		if err != nil {
			return
		}
		if len(samples) == 0 {
			t.Fatal("no error and no sample")
		}
		for _, s := range samples {
			if s.Name == "" {
				t.Fatalf("a sample without a name from %q", text)
			}
		}
	})
}
