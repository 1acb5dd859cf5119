// Package console writes the text aimeter prints for an outcome: the
// summary of a run (WriteRun), of a GB/T test, a training test
// (WriteTraining), a sweep (WriteSweep), a rate search (WriteRateSearch),
// a video-stream search's probes (WriteStreamProbes) and the demo's table
// (WriteDemoTable). A Go program that embeds aimeter prints with it the
// same bytes as the command line does.
//
// The text never names a command-line flag: where the command line adds a
// hint ("use --x"), it prints it after calling this package. Nothing here
// computes a figure; every value printed is one of the outcome's or of a
// file derived from its bundle (packages derived and derived/metrics).
package console
