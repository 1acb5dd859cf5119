package telemetry

import (
	"io"

	"aimeter/bundle"
)

// LogPart is telemetry.json as a raw part of a bundle: what the run's
// power, energy and utilisation sources read.
var LogPart = bundle.PartType[*Log]{Name: bundle.TelemetryFile, Read: ReadLog, Write: func(w io.Writer, l *Log) error { return l.Write(w) }}

// LogOf returns the telemetry of b's run; nil for a run without a source
// (or with a malformed telemetry.json, which derived.Read reports).
func LogOf(b *bundle.Bundle) *Log { return LogPart.Value(b) }

// SetLog makes l the telemetry of b's run; nil removes it.
func SetLog(b *bundle.Bundle, l *Log) {
	if l == nil {
		LogPart.Remove(b)
		return
	}
	LogPart.Set(b, l)
}
