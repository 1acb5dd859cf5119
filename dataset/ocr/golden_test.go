package ocr

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of dataset/ocr")

// The layout and pixels of a small set stay what they were: a change to
// the generator (word choice, placement, rendering) changes every OCR
// score measured before it, so it must be deliberate (go test -update).
// The golden file holds Debian bookworm's DejaVu Sans 2.37 and wamerican
// 2020.12.07 renderings on amd64 (arm64 may fuse multiply-adds and move a
// pixel).
func TestGoldenLayout(t *testing.T) {
	need(t)
	s, err := Generate(Options{Images: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	type word struct {
		Text  string       `json:"text"`
		Size  int          `json:"size"`
		Angle string       `json:"angle"`
		Box   [4][2]string `json:"box"`
	}
	type page struct {
		Words     []word `json:"words"`
		PixSHA256 string `json:"pix_sha256"`
	}
	var got struct {
		Name  string `json:"name"`
		Pages []page `json:"pages"`
	}
	got.Name = s.Name()
	for i := range s.Len() {
		var p page
		for _, w := range s.Page(i).Words {
			x := word{Text: w.Text, Size: w.Size, Angle: fmt.Sprintf("%.4f", w.Angle)}
			for k, c := range w.Box {
				x.Box[k] = [2]string{fmt.Sprintf("%.2f", c[0]), fmt.Sprintf("%.2f", c[1])}
			}
			p.Words = append(p.Words, x)
		}
		p.PixSHA256 = fmt.Sprintf("%x", sha256.Sum256(s.Render(i).Pix))
		got.Pages = append(got.Pages, p)
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "layout-seed1.golden.json")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(want) != string(b)+"\n" {
		t.Errorf("the generated set differs from %s (go test -update rewrites it if the change is meant):\n%s", path, b)
	}
}
