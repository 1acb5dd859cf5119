package bundle

import (
	"encoding/json"
	"io"
	"os"
)

// Names of the files of a training bundle (GB/T 45087 clause 6), whose raw
// files are a part of package train/trainbundle: the events as received
// and how they came in. The derived files are gbt_training.json,
// gbt_training.log and report.html.
const (
	// TrainingEventsFile holds every train.Event as received, one JSON
	// object per line, in the order received.
	TrainingEventsFile = "training_events.jsonl"
	// TrainingRunFile describes the run: configuration, scenario, test
	// information, time zone, and how the events came in. A bundle whose
	// manifest lists it is a training bundle: it has no Result.
	TrainingRunFile = "training_run.json"
	// TrainingStdoutFile and TrainingStderrFile are the captured output
	// of a training program run as a child, as much as was kept.
	TrainingStdoutFile = "training_stdout.log"
	TrainingStderrFile = "training_stderr.log"
	// TrainingResultFile and TrainingLogFile are the derived result and
	// training log (GB-6.3-c, GB-6.3-c-4).
	TrainingResultFile = "gbt_training.json"
	TrainingLogFile    = "gbt_training.log"
)

// WriteJSON writes v as indented JSON and a newline, as every JSON file of
// a bundle is written.
func WriteJSON(w io.Writer, v any) error {
	enc, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(enc, '\n'))
	return err
}

// writePartsOnly is Write for a bundle without a Result (a training run):
// its raw files are its parts'.
func writePartsOnly(dir string, b *Bundle, derivations []Derivation) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	first, rest, err := b.extraParts("")
	if err != nil {
		return err
	}
	parts := append(append(first, rest...), b.derivedParts("", derivations)...)
	if err := removeStale(dir, parts); err != nil {
		return err
	}
	entries, err := writeParts(dir, parts, nil)
	if err != nil {
		return err
	}
	m := &Manifest{Format: FormatName, FormatVersion: FormatVersion, Generator: "aimeter " + b.Version, Files: entries}
	if err := writeManifest(dir, m); err != nil {
		return err
	}
	b.Manifest, b.dir = m, dir
	return nil
}
