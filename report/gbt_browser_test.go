package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var hashRE = regexp.MustCompile(`\b[0-9a-f]{64}\b`)

// TestBrowserShowsGBTVerdict renders, in headless Chromium, one page per
// arrival mode (2 Poisson, 3 peak, 5 mixed) with a GB/T run that passes and
// one that fails, all with LoadGen's summary INVALID and "Reduce target
// QPS". It checks what a reader sees: the heading badge, the first headline
// badge and the overview badge of each run are the GB/T loss-rate verdict
// (GB-7.7.1-c-2, IN-79), PASS under the threshold and FAIL over it; LoadGen's
// INVALID appears only under the label "MLPerf LoadGen checks (not the
// verdict of a GB/T test)"; and "Reduce target QPS" is not shown as advice.
func TestBrowserShowsGBTVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	cases := gbtCases()
	for i := 0; i < len(cases); i += 2 {
		pass, fail := cases[i], cases[i+1]
		t.Run(strings.TrimSuffix(pass.name, " PASS"), func(t *testing.T) {
			page := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(page, render(t, gbtReport(gbtScenario(t, pass), gbtScenario(t, fail))), 0o644); err != nil {
				t.Fatal(err)
			}
			run := openInBrowser(t, page, "")
			for _, p := range run.problems {
				t.Errorf("page: %s", p)
			}
			if run.rendered != run.want {
				t.Errorf("page script rendered %q charts, page has %q", run.rendered, run.want)
			}
			if len(run.sections) != 2 || len(run.overview) != 2 {
				t.Fatalf("%d sections, %d overview badges; want 2 of each", len(run.sections), len(run.overview))
			}
			for j, want := range []string{"PASS", "FAIL"} {
				sec := run.sections[j]
				if sec.Badge != want {
					t.Errorf("%s: heading badge %q, want the GB/T verdict %q", sec.ID, sec.Badge, want)
				}
				if len(sec.Headlines) == 0 || sec.Headlines[0] != want {
					t.Errorf("%s: headline badges %q, want the GB/T verdict %q first", sec.ID, sec.Headlines, want)
				}
				if run.overview[j] != want {
					t.Errorf("overview row %d: badge %q, want %q", j+1, run.overview[j], want)
				}
				if strings.Contains(sec.Text, "Reduce target QPS") {
					t.Errorf("%s: the page shows MLPerf's \"Reduce target QPS\" on a GB/T run", sec.ID)
				}
				label := strings.Index(sec.Text, "MLPerf LoadGen checks (not the verdict of a GB/T test)")
				invalid := strings.Index(sec.Text, "INVALID")
				if label < 0 || invalid < label {
					t.Errorf("%s: LoadGen's INVALID is not (only) under the MLPerf label (label at %d, INVALID at %d)", sec.ID, label, invalid)
				}
				if !strings.Contains(sec.Text, "Time breakdown (Table 16") || !strings.Contains(sec.Text, "Losses per second") {
					t.Errorf("%s: the GB/T metrics are not shown", sec.ID)
				}
			}
			// The schedule hash (IN-53) is hex, not a number.
			for _, p := range numberProblems(hashRE.ReplaceAllString(run.text, "<hash>")) {
				t.Errorf("page text: %s", p)
			}
		})
	}
}
