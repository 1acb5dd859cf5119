// Package telemetry reads power, energy and utilisation meters while a run
// goes, on the run's clock, and turns the readings into the energy figures
// MLPerf Power and GB/T 45087 report.
//
// A Source is one meter. A Poller (RAPL, NVML) is read by a Sampler on its own
// goroutine, once a period (1 s by default); a Windowed source (a replayed
// CSV, a Prometheus server) is asked once, after the run, for the readings
// of the run's window. Every Reading carries its node, device and a time in
// nanoseconds from the run's start, the clock of the records. A source that
// fails or answers late leaves a Gap, never a made-up reading, and the run
// goes on.
//
// Summarize computes, over a window: energy from counters where a source
// has them (differences, with wrap-around and resets counted by the source)
// and from integrated power otherwise (the trapezoid rule), average and
// peak power, the cluster power as the sum over devices at the same
// instants, the coverage of the window, and a note instead of a figure where
// there were too few readings.
package telemetry
