package dbnet

import (
	"image"
	"testing"
)

// BenchmarkPreprocess normalises a 320×320 image as the T13-1 workload
// does (no resize), and one that is resized to 320×320.
func BenchmarkPreprocess(b *testing.B) {
	for _, size := range []int{320, 400} {
		img := image.NewRGBA(image.Rect(0, 0, size, size))
		for i := range img.Pix {
			img.Pix[i] = byte(i * 7)
		}
		dst := make([]float32, 3*320*320)
		b.Run(map[int]string{320: "320x320", 400: "400x400-resized"}[size], func(b *testing.B) {
			for b.Loop() {
				if err := Preprocess(img, 320, 320, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBoxes post-processes a 320×320 probability map with five word
// regions, two of them rotated.
func BenchmarkBoxes(b *testing.B) {
	const w, h = 320, 320
	m := make([]float32, w*h)
	fillRect(m, w, 80, 40, 120, 24, 0, 0.9)
	fillRect(m, w, 200, 100, 160, 30, 0.2, 0.95)
	fillRect(m, w, 100, 180, 90, 20, -0.15, 0.9)
	fillRect(m, w, 240, 220, 100, 28, 0, 0.92)
	fillRect(m, w, 120, 280, 180, 34, 0, 0.97)
	for b.Loop() {
		if boxes, err := Boxes(m, w, h, w, h, Options{}); err != nil || len(boxes) != 5 {
			b.Fatalf("%d boxes, %v", len(boxes), err)
		}
	}
}
