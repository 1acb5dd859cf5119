package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Images is a labelled set of grey images.
type Images struct {
	Name       string
	Rows, Cols int
	Pixels     []uint8 // Len() images of Rows×Cols bytes, row-major
	Labels     []uint8
	Classes    []string // class names by label
	Captions   []string // synthetic sets: the generating caption of each image
}

// Len returns the number of images.
func (s *Images) Len() int { return len(s.Labels) }

// Image returns the pixels of image i.
func (s *Images) Image(i int) []uint8 {
	n := s.Rows * s.Cols
	return s.Pixels[i*n : (i+1)*n : (i+1)*n]
}

// Floats returns every image as float32 pixels scaled to [0, 1].
func (s *Images) Floats() []float32 {
	out := make([]float32, len(s.Pixels))
	for i, p := range s.Pixels {
		out[i] = float32(p) / 255
	}
	return out
}

// FashionMNISTDir is where the Debian package dataset-fashion-mnist installs
// the data set.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// FashionMNISTClasses are the ten Fashion-MNIST classes by label.
var FashionMNISTClasses = []string{
	"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
	"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
}

// Split selects the training or the test part of a data set.
type Split string

// The two splits.
const (
	Train Split = "train"
	Test  Split = "t10k"
)

// ErrMissing reports a data set that is not installed.
var ErrMissing = errors.New("data set not installed")

// LoadFashionMNIST reads one split of Fashion-MNIST from dir (usually
// FashionMNISTDir). A missing or corrupt file gives one error that names the
// file and says what to do.
func LoadFashionMNIST(dir string, split Split) (*Images, error) {
	imgPath := filepath.Join(dir, string(split)+"-images-idx3-ubyte.gz")
	lblPath := filepath.Join(dir, string(split)+"-labels-idx1-ubyte.gz")
	hint := "install the Debian package dataset-fashion-mnist (apt-get install dataset-fashion-mnist) or use the synthetic data set"
	imgs, err := ReadIDXFile(imgPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v: %s", ErrMissing, err, hint)
		}
		return nil, fmt.Errorf("%v: the file is corrupt: reinstall dataset-fashion-mnist or use the synthetic data set", err)
	}
	lbls, err := ReadIDXFile(lblPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v: %s", ErrMissing, err, hint)
		}
		return nil, fmt.Errorf("%v: the file is corrupt: reinstall dataset-fashion-mnist or use the synthetic data set", err)
	}
	if len(imgs.Dims) != 3 || len(lbls.Dims) != 1 {
		return nil, fmt.Errorf("%s, %s: want N×rows×cols images and N labels, got dimensions %v and %v", imgPath, lblPath, imgs.Dims, lbls.Dims)
	}
	if imgs.Dims[0] != lbls.Dims[0] {
		return nil, fmt.Errorf("%s has %d images but %s has %d labels", imgPath, imgs.Dims[0], lblPath, lbls.Dims[0])
	}
	for i, l := range lbls.Data {
		if int(l) >= len(FashionMNISTClasses) {
			return nil, fmt.Errorf("%s: label %d of sample %d is not a Fashion-MNIST class (0–9)", lblPath, l, i)
		}
	}
	return &Images{
		Name: "fashion-mnist-" + string(split), Rows: imgs.Dims[1], Cols: imgs.Dims[2],
		Pixels: imgs.Data, Labels: lbls.Data, Classes: FashionMNISTClasses,
	}, nil
}
