package bundle

// TelemetryFile is the raw file of a run's power, energy and utilisation
// readings, written when the run had a source: a part of package
// telemetry (telemetry.LogOf).
const TelemetryFile = "telemetry.json"
