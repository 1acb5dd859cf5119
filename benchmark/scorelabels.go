package benchmark

import (
	"encoding/json"
	"os"
	"path/filepath"

	"aimeter/accuracy"
	"aimeter/bundle"
)

// ScoreLogLabels scores the accuracy log in dir (bundle.AccuracyFile)
// top-1 against the ground truth in labelsFile, a JSON array of the class
// of each sample by qsl_idx, and judges target where it is not nil
// (accuracy.ScoreLabels; aimeter accuracy log DIR --labels FILE). A labels
// file that cannot be read, is not such an array or holds a class out of
// range is a *UsageError with Field "Labels"; a log that cannot be
// decoded or scored against the labels a *UsageError with Field "Log",
// its text naming the log; a log that cannot be opened is the open's
// error.
func ScoreLogLabels(dir, labelsFile string, target *accuracy.Target) (*accuracy.LabelScore, error) {
	lb, err := os.ReadFile(labelsFile)
	if err != nil {
		return nil, &UsageError{Field: "Labels", Err: err}
	}
	var labels []int
	if err := json.Unmarshal(lb, &labels); err != nil {
		return nil, usage("Labels", "%s: want a JSON array of class numbers: %v", labelsFile, err)
	}
	if err := accuracy.CheckLabels(labels); err != nil {
		return nil, usage("Labels", "%s: %v", labelsFile, err)
	}
	f, err := os.Open(filepath.Join(dir, bundle.AccuracyFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := bundle.ReadAccuracyLog(f)
	if err != nil {
		return nil, usage("Log", "%s: %v", f.Name(), err)
	}
	score, err := accuracy.ScoreLabels(entries, labels, target)
	if err != nil {
		return nil, usage("Log", "%s: %v", f.Name(), err)
	}
	return score, nil
}
