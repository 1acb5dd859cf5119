// Package mlp sets up aimeter's reference SUT: the pure-Go MLP image
// classifier of package model, served by the dynamic batcher of package
// reference on one of aimeter's built-in image data sets.
//
// Setting it up takes three calls: LoadData chooses the data set
// (Fashion-MNIST from the Debian package dataset-fashion-mnist, or a seeded
// synthetic set), ObtainModel loads the trained weights from a cache file or
// trains the model and caches it, and Serve starts the SUT over a QSL of the
// test split. The aimeter commands demo, run --sut reference, serve kserve
// and train --workload reference are built on them; they add only the
// console output.
package mlp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"aimeter/dataset"
	"aimeter/model"
	"aimeter/sut/reference"
)

// What the reference SUT is, for the test information of a report
// (GB/T 45087 6.1 a) and 7.1 a)): the framework, the model, the precision it
// computes in and its largest batch. It batches dynamically: a batch holds
// whatever samples are queued, 1 to MaxBatch.
const (
	// Framework names the reference SUT's inference code (the framework of
	// field 16 of GB/T 45087 6.1 a)); its version is aimeter's.
	Framework = "aimeter pure-Go MLP"
	// ModelName names the reference model.
	ModelName = "aimeter reference MLP"
	// Precision is the precision the model computes in, as GB/T 45087
	// names it (testinfo.FP32).
	Precision = "FP32"
	// MaxBatch is the reference SUT's largest batch.
	MaxBatch = 64
)

// Quality targets of the reference model: top-1 accuracy on the test split,
// on the 0–1 scale.
const (
	FashionMNISTTarget = 0.85
	SyntheticTarget    = 0.95
)

// The sizes and seeds of the synthetic data set's splits.
const (
	SyntheticTrainSize = 20000
	SyntheticTestSize  = 5000
	syntheticTrainSeed = 1
	syntheticTestSeed  = 2
)

// Data is a chosen data set: its two splits and the model's quality target
// on it.
type Data struct {
	// Train is the training split. A caller that has obtained the model
	// may set it to nil to free its memory.
	Train *dataset.Images
	// Test is the test split: the samples the SUT serves.
	Test *dataset.Images
	// Target is the quality target, top-1 accuracy on Test on the 0–1
	// scale: FashionMNISTTarget or SyntheticTarget.
	Target float64
}

// DataOptions configure LoadData. The zero value loads Fashion-MNIST from
// where the Debian package installs it and tells nothing.
type DataOptions struct {
	// Dir is the directory of the Fashion-MNIST IDX files; "" means
	// dataset.FashionMNISTDir.
	Dir string
	// Notify, if not nil, is told, in one sentence without a final full
	// stop, when LoadData falls back to the synthetic set; nil tells
	// nobody.
	Notify func(string)
}

// ErrUnknownData is LoadData's error for a name it does not know.
var ErrUnknownData = errors.New("unknown data set: want fashion-mnist, synthetic or auto")

// FallbackNote is what LoadData tells DataOptions.Notify when "auto" finds
// no Fashion-MNIST and uses the synthetic set.
const FallbackNote = "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist); using the synthetic image set"

// LoadData loads the data set called name:
//
//   - "fashion-mnist": Fashion-MNIST (train and t10k splits) from
//     opts.Dir, with the target FashionMNISTTarget; an error if it is
//     missing or corrupt;
//   - "synthetic": the seeded synthetic image set of
//     dataset.Synthetic, SyntheticTrainSize training and
//     SyntheticTestSize test images, with the target SyntheticTarget;
//   - "auto": Fashion-MNIST if it is installed, else (after telling
//     opts.Notify FallbackNote) the synthetic set. A corrupt
//     Fashion-MNIST is still an error.
//
// Any other name gives an error that wraps ErrUnknownData.
func LoadData(name string, opts DataOptions) (*Data, error) {
	synthetic := func() *Data {
		return &Data{
			Train:  dataset.Synthetic(SyntheticTrainSize, syntheticTrainSeed),
			Test:   dataset.Synthetic(SyntheticTestSize, syntheticTestSeed),
			Target: SyntheticTarget,
		}
	}
	switch name {
	case "synthetic":
		return synthetic(), nil
	case "fashion-mnist", "auto":
		dir := opts.Dir
		if dir == "" {
			dir = dataset.FashionMNISTDir
		}
		train, err := dataset.LoadFashionMNIST(dir, dataset.Train)
		if err == nil {
			var test *dataset.Images
			if test, err = dataset.LoadFashionMNIST(dir, dataset.Test); err == nil {
				return &Data{Train: train, Test: test, Target: FashionMNISTTarget}, nil
			}
		}
		if name == "auto" && errors.Is(err, dataset.ErrMissing) {
			if opts.Notify != nil {
				opts.Notify(FallbackNote)
			}
			return synthetic(), nil
		}
		return nil, err
	}
	return nil, fmt.Errorf("%q: %w", name, ErrUnknownData)
}

// WeightsPath returns the file in which ObtainModel caches the weights
// trained on the training split train: under os.UserCacheDir (the
// temporary directory where there is none), named after the split and
// model.DefaultLayers, such as
// ~/.cache/aimeter/reference-synthetic-shapes-seed1-784-128-10.aimw.
func WeightsPath(train *dataset.Images) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	layers := strings.Trim(strings.ReplaceAll(fmt.Sprint(model.DefaultLayers()), " ", "-"), "[]")
	return filepath.Join(dir, "aimeter", fmt.Sprintf("reference-%s-%s.aimw", train.Name, layers))
}

// ModelOptions configure ObtainModel. The zero value loads the weights
// cached at WeightsPath, or trains with model.DefaultTrainConfig and caches
// them there, without progress reports.
type ModelOptions struct {
	// Weights is the weights file to load or to write; "" means
	// WeightsPath of the training split.
	Weights string
	// Retrain trains and overwrites Weights even where it exists; false
	// loads an existing file.
	Retrain bool
	// Config is the training configuration; nil means
	// model.DefaultTrainConfig(). The model has model.DefaultLayers and
	// is initialised from Config.Seed.
	Config *model.TrainConfig
	// Progress, if not nil, is called after each training epoch with the
	// epoch (1 to epochs), the number of epochs, and the epoch's mean
	// loss and top-1 accuracy on the training split; nil reports nothing.
	Progress func(epoch, epochs int, loss, acc float64)
}

// Obtained says where ObtainModel's model came from.
type Obtained struct {
	// Path is the weights file loaded or written.
	Path string
	// Trained is true where the model was trained, false where it was
	// loaded from Path.
	Trained bool
	// Epochs and Took are the number of epochs trained and how long the
	// training took; zero where the model was loaded.
	Epochs int
	Took   time.Duration
	// SaveErr is why the trained weights could not be written to Path;
	// nil where they were (or the model was loaded). The model is usable
	// either way.
	SaveErr error
}

// String says in a phrase where the model came from: "loaded from PATH",
// "trained in 4.2s (3 epochs) and saved to PATH", or, where SaveErr is set,
// "... (3 epochs), not saved to PATH".
func (o *Obtained) String() string {
	if !o.Trained {
		return "loaded from " + o.Path
	}
	saved := " and saved to"
	if o.SaveErr != nil {
		saved = ", not saved to"
	}
	return fmt.Sprintf("trained in %v (%d epochs)%s %s", o.Took.Round(100*time.Millisecond), o.Epochs, saved, o.Path)
}

// WeightsError is ObtainModel's error for a weights file it cannot use:
// unreadable or corrupt (Err says why), or made for another data set.
// Deleting the file or setting ModelOptions.Retrain trains the model anew.
type WeightsError struct {
	// Path is the weights file.
	Path string
	// Err is why the file could not be loaded; nil where it loaded but
	// does not fit the data set.
	Err error
	// Inputs and Classes are the loaded model's, where Err is nil.
	Inputs, Classes int
}

// Error says what is wrong with the file.
func (e *WeightsError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("weights file %s is for %d inputs and %d classes, not this data set", e.Path, e.Inputs, e.Classes)
}

// Unwrap returns Err.
func (e *WeightsError) Unwrap() error { return e.Err }

// ObtainModel returns the reference model for the training split train:
// loaded from opts.Weights unless opts.Retrain is set or the file does not
// exist, else trained on train and written to opts.Weights (creating its
// directory). A file that exists but cannot be used gives a *WeightsError;
// a failed or cancelled training an error that wraps the cause. Obtained
// is nil only with an error.
func ObtainModel(ctx context.Context, train *dataset.Images, opts ModelOptions) (*model.MLP, *Obtained, error) {
	path := opts.Weights
	if path == "" {
		path = WeightsPath(train)
	}
	if !opts.Retrain {
		m, err := model.LoadFile(path)
		switch {
		case err == nil:
			if m.Inputs() != train.Rows*train.Cols || m.Classes() != len(train.Classes) {
				return nil, nil, &WeightsError{Path: path, Inputs: m.Inputs(), Classes: m.Classes()}
			}
			return m, &Obtained{Path: path}, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, nil, &WeightsError{Path: path, Err: err}
		}
	}
	cfg := model.DefaultTrainConfig()
	if opts.Config != nil {
		cfg = *opts.Config
	}
	m := model.New(model.DefaultLayers(), cfg.Seed)
	start := time.Now()
	err := m.Train(ctx, train.Floats(), train.Labels, train.Len(), cfg, func(epoch int, loss, acc float64) {
		if opts.Progress != nil {
			opts.Progress(epoch, cfg.Epochs, loss, acc)
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("training: %w", err)
	}
	o := &Obtained{Path: path, Trained: true, Epochs: cfg.Epochs, Took: time.Since(start)}
	if o.SaveErr = os.MkdirAll(filepath.Dir(path), 0o755); o.SaveErr == nil {
		o.SaveErr = m.SaveFile(path)
	}
	return m, o, nil
}

// ServeOptions configure Serve. The zero value serves with every core,
// with per-sample stage times and no hook.
type ServeOptions struct {
	// Threads is the most goroutines the model uses for one batch; 0
	// means one per core.
	Threads int
	// NoStageTimes leaves the per-sample stage times out of the
	// responses (see reference.Options.NoStageTimes); false keeps them.
	NoStageTimes bool
	// OnClassified, if not nil, sees the QSL index and predicted class of
	// every sample (see reference.Options.OnClassified); nil sees none.
	OnClassified func(index uint64, class uint8)
}

// Serve starts the reference SUT serving m over qsl, batching dynamically
// up to MaxBatch samples. The caller closes the SUT.
func Serve(m *model.MLP, qsl *dataset.QSL, opts ServeOptions) (*reference.SUT, error) {
	set := qsl.Set()
	return reference.New(reference.Options{
		Name:         "ReferenceSUT (pure-Go MLP)",
		InputSize:    set.Rows * set.Cols,
		NoStageTimes: opts.NoStageTimes,
		NewPredictor: func() reference.Predictor {
			inf := m.NewInferencer(MaxBatch)
			inf.SetThreads(opts.Threads)
			return &predictor{inf: inf}
		},
		Samples:      qsl,
		MaxBatch:     MaxBatch,
		OnClassified: opts.OnClassified,
	})
}

// QSLPerformanceSamples is the performance sample count of the QSL that
// the aimeter commands serve the test split from (dataset.NewQSL).
const QSLPerformanceSamples = 1024

// predictor adapts the model to the reference SUT.
type predictor struct {
	inf *model.Inferencer
	out []int
}

func (p *predictor) Predict(x []float32, batch int, classes []uint8) {
	p.out = p.inf.Predict(p.out[:0], x, batch)
	for i, c := range p.out {
		classes[i] = uint8(c)
	}
}
