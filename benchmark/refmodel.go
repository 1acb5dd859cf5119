package benchmark

import (
	"context"
	"errors"
	"fmt"

	"aimeter/model"
	"aimeter/sut/reference/mlp"
)

// ReferenceOptions say how ObtainReference gets the reference model and
// its data set (aimeter demo, aimeter serve kserve).
type ReferenceOptions struct {
	// Dataset names the data set: "fashion-mnist", "synthetic" or "auto"
	// (Fashion-MNIST if installed, else the synthetic set); "" means
	// "auto".
	Dataset string
	// Weights is the weights file to load or write; "" means the default
	// file of the data set in the user cache directory
	// (mlp.ModelOptions.Weights).
	Weights string
	// Retrain trains and overwrites Weights even where it exists.
	Retrain bool
	// Notify, if set, is told in one sentence without a final full stop
	// where "auto" falls back to the synthetic set.
	Notify func(note string)
	// Progress, if set, is called after each training epoch with the
	// epoch (1 to epochs), the number of epochs, and the epoch's mean loss
	// and training accuracy.
	Progress func(epoch, epochs int, loss, acc float64)
}

// Reference is the reference model and its data set (ObtainReference).
type Reference struct {
	// Data is the data set; its Train split is nil, let go once the model
	// was obtained, since the runs keep every record in memory.
	Data *mlp.Data
	// Model is the reference model, loaded or trained.
	Model *model.MLP
	// How says where the model came from ("loaded from PATH", "trained
	// …").
	How string
	// SaveErr is why trained weights could not be cached; the model is
	// usable either way.
	SaveErr error
}

// WeightsError is ObtainReference's error for a weights file it cannot
// use (mlp.WeightsError): deleting the file or setting Retrain trains the
// model anew.
type WeightsError = mlp.WeightsError

// ObtainReference loads the data set ro.Dataset names and obtains the
// reference model for it (mlp.LoadData, mlp.ObtainModel). An unknown data
// set is a *UsageError with Field "ReferenceOptions.Dataset" whose Err
// starts with the quoted name; an unusable weights file a *WeightsError; a
// failed or cancelled training an error that wraps the cause.
func ObtainReference(ctx context.Context, ro ReferenceOptions) (*Reference, error) {
	name := ro.Dataset
	if name == "" {
		name = "auto"
	}
	data, err := mlp.LoadData(name, mlp.DataOptions{Notify: ro.Notify})
	if errors.Is(err, mlp.ErrUnknownData) {
		return nil, &UsageError{Field: "ReferenceOptions.Dataset", Err: fmt.Errorf("%q: want fashion-mnist, synthetic or auto", name)}
	}
	if err != nil {
		return nil, err
	}
	m, got, err := mlp.ObtainModel(ctx, data.Train, mlp.ModelOptions{
		Weights: ro.Weights, Retrain: ro.Retrain, Progress: ro.Progress,
	})
	if err != nil {
		return nil, err
	}
	data.Train = nil
	return &Reference{Data: data, Model: m, How: got.String(), SaveErr: got.SaveErr}, nil
}
