//go:build onnx

package onnx

import (
	"encoding/binary"
	"fmt"
	"image"
	"math"
	"math/rand/v2"

	"aimeter/sut/onnx/dbnet"
)

// ImageSource serves the loaded images of a data set (dataset/ocr.QSL).
type ImageSource interface {
	Image(index uint64) (*image.RGBA, bool)
}

// DBNetTask is the Task of a DB text detector (PaddleOCR's PP-OCR
// detection models): its input is the image resized and normalised
// (dbnet.Preprocess), its output the probability map, which
// dbnet.Boxes turns into boxes on the image; the response is the boxes
// as dataset/ocr.EncodeQuads writes them (8 little-endian float32 each).
type DBNetTask struct {
	// Images serves the images (required).
	Images ImageSource
	// Options are the detector's pre- and post-processing settings; the
	// zero value means PaddleOCR's defaults.
	Options dbnet.Options
}

var _ Task = (*DBNetTask)(nil)

func (t *DBNetTask) image(index uint64) (*image.RGBA, error) {
	img, ok := t.Images.Image(index)
	if !ok {
		return nil, fmt.Errorf("sample %d is not loaded in the QSL", index)
	}
	return img, nil
}

// InputShape is [3, H, W] of the resized image.
func (t *DBNetTask) InputShape(index uint64) ([]int64, error) {
	img, err := t.image(index)
	if err != nil {
		return nil, err
	}
	w, h := dbnet.InputSize(img.Bounds().Dx(), img.Bounds().Dy(), t.Options)
	return []int64{3, int64(h), int64(w)}, nil
}

// Preprocess resizes and normalises the image into dst.
func (t *DBNetTask) Preprocess(index uint64, dst []float32) error {
	img, err := t.image(index)
	if err != nil {
		return err
	}
	w, h := dbnet.InputSize(img.Bounds().Dx(), img.Bounds().Dy(), t.Options)
	return dbnet.Preprocess(img, w, h, dst)
}

// Postprocess finds the boxes in the probability map ([1, H, W]).
func (t *DBNetTask) Postprocess(index uint64, out Output, dst []byte) ([]byte, error) {
	img, err := t.image(index)
	if err != nil {
		return dst, err
	}
	if out.Float32 == nil || len(out.Shape) != 3 || out.Shape[0] != 1 {
		return dst, fmt.Errorf("dbnet: the model's output has shape %v, want a float32 probability map [1, H, W]", out.Shape)
	}
	boxes, err := dbnet.Boxes(out.Float32, int(out.Shape[2]), int(out.Shape[1]), img.Bounds().Dx(), img.Bounds().Dy(), t.Options)
	if err != nil {
		return dst, err
	}
	for _, b := range boxes {
		for _, c := range b {
			for _, v := range c {
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
			}
		}
	}
	return dst, nil
}

// RandomTask feeds any model with a fixed input shape seeded
// pseudo-random inputs, uniform in [0, 1), the same for a sample index on
// every run; the response is the raw output tensor, little-endian.
type RandomTask struct {
	// Shape is the input shape without the batch dimension (required).
	Shape []int64
	// Seed seeds the inputs; 0 is a seed like any other.
	Seed uint64
}

var _ Task = (*RandomTask)(nil)

// InputShape returns Shape.
func (t *RandomTask) InputShape(uint64) ([]int64, error) { return t.Shape, nil }

// Preprocess writes the sample's inputs.
func (t *RandomTask) Preprocess(index uint64, dst []float32) error {
	rng := rand.New(rand.NewPCG(t.Seed, index))
	for i := range dst {
		dst[i] = rng.Float32()
	}
	return nil
}

// Postprocess copies the output tensor.
func (t *RandomTask) Postprocess(_ uint64, out Output, dst []byte) ([]byte, error) {
	for _, v := range out.Float32 {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	}
	for _, v := range out.Int64 {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
	}
	return dst, nil
}
