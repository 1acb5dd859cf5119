package bundle

import (
	"fmt"
	"io"

	"aimeter/telemetry"
)

// TelemetryFile is the raw file of a run's power, energy and utilisation
// readings (package telemetry), written when the run had a source.
const TelemetryFile = "telemetry.json"

// telemetryParts lists telemetry.json when b has readings.
func (b *Bundle) telemetryParts(prefix string) []part {
	if b.Telemetry == nil {
		return nil
	}
	return []part{{prefix + TelemetryFile, Raw, func(w io.Writer) error { return b.Telemetry.Write(w) }}}
}

// readTelemetry reads telemetry.json into b.
func (b *Bundle) readTelemetry(r io.Reader) error {
	l, err := telemetry.ReadLog(r)
	if err != nil {
		return fmt.Errorf("%s: %w", TelemetryFile, err)
	}
	b.Telemetry = l
	return nil
}
