package report

import (
	"bytes"
	"strings"
	"testing"
)

// pageAssets are the stylesheets and scripts a page inlines, with the
// marker that stands for each in a golden file: the goldens hold the
// page's own content, so a change of style or script rewrites none of
// them, and TestAssets checks the assets once.
var pageAssets = []struct{ name, text string }{
	{"assets/uPlot.iife.min.js", uplotJS},
	{"assets/uPlot.min.css", uplotCSS},
	{"page.js", pageJS},
	{"page.css", pageCSS},
}

// assetMarker stands for the asset name in a golden file.
func assetMarker(name string) string {
	return "/* " + name + " (embedded; elided in the golden file, checked by TestAssets) */"
}

// elideAssets replaces every inlined asset of page by its marker.
func elideAssets(page []byte) []byte {
	for _, a := range pageAssets {
		page = bytes.ReplaceAll(page, []byte(a.text), []byte(assetMarker(a.name)))
	}
	return page
}

// TestAssets checks the inlined assets once: each is there, none can end
// the element it is inlined in, and each page embeds the ones it uses
// verbatim, exactly once.
func TestAssets(t *testing.T) {
	for _, a := range pageAssets {
		if strings.TrimSpace(a.text) == "" {
			t.Errorf("%s is empty", a.name)
		}
		if strings.Contains(strings.ToLower(a.text), "</style") || strings.Contains(strings.ToLower(a.text), "</script") {
			t.Errorf("%s holds an end tag that would end its element early", a.name)
		}
	}
	pages := []struct {
		name string
		page []byte
		uses []string
	}{
		{"report", render(t, testReport(t)), []string{"assets/uPlot.iife.min.js", "assets/uPlot.min.css", "page.js", "page.css"}},
		{"training", trainingPage(t), []string{"page.css"}},
		{"rate search", rateSearchPage(t), []string{"page.css"}},
	}
	for _, p := range pages {
		for _, a := range pageAssets {
			want := 0
			for _, u := range p.uses {
				if u == a.name {
					want = 1
				}
			}
			if n := bytes.Count(p.page, []byte(a.text)); n != want {
				t.Errorf("the %s page embeds %s %d times, want %d", p.name, a.name, n, want)
			}
		}
		if p.name == "report" && !bytes.Contains(elideAssets(p.page), []byte(assetMarker("assets/uPlot.min.css"))) {
			t.Errorf("the %s page's golden form lacks the marker of uPlot's stylesheet", p.name)
		}
	}
}
