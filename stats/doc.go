// Package stats holds the order statistics, early-stopping arithmetic and
// small aggregate helpers used by aimeter's port of MLPerf LoadGen and by its
// GB/T 45087 metrics.
//
// # Exactness
//
// The LoadGen-derived functions in this package (Percentile, MeanInt,
// EarlyStopping and its SingleStream, MultiStream and Server methods) are
// meant to give exactly the numbers and text the C++ LoadGen gives
// (loadgen/results.cc and loadgen/early_stopping.cc; see loadgen-reference
// §9 in docs/requirements.md), not merely statistically
// equivalent ones. To that end they
//
//   - index sorted latencies with the truncated IEEE double product
//     float64(n)*p, as LoadGen does;
//   - evaluate the early-stopping odds with the same sequence of float64
//     operations as LoadGen (explicit float64 conversions stop the Go compiler
//     from fusing a multiply and an add into an FMA on any architecture);
//   - reproduce LoadGen's memoising search for the minimum passing query
//     count, whose answers depend on which values were computed before, so an
//     EarlyStopping value must see the same sequence of queries as LoadGen's
//     MinPassingQueriesFinder does (see EarlyStopping).
//
// The tests compare against golden data printed by an independent C++14
// re-statement of the algorithm (testdata/es_oracle.cc) built with GCC and
// glibc's libm; every integer result (minimum passing counts, estimates,
// discard counts) and every text line matches.
//
// One residual, unavoidable difference remains: Go's math.Log, math.Exp and
// math.Lgamma are not bit-identical to glibc's (on linux/amd64 with Go 1.26,
// lgamma of an integer differs in the last bit for about 0.7% of arguments).
// Because lnB(h, t+1) is a difference of lgamma values near 1e7, one ulp
// there moves the odds by about 1e-8 relative, so a result can differ from
// LoadGen only when the odds at the boundary h lie within about 1e-8 of 1-c.
// No such case occurs in the golden data (hundreds of thousands of decisions)
// with the default GOAMD64=v1. Building with GOAMD64=v3, or for arm64, lets
// the compiler fuse multiply-adds inside the math package itself, which makes
// Lgamma differ from glibc far more often; the golden test then finds such a
// case (p = 0.99, t = 8550: 868101 instead of 868100). LoadGen is itself not
// immune: glibc selects FMA variants of exp and log at run time by CPU.
//
// The package uses only the standard library and keeps no global state.
package stats
