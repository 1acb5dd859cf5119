package loadgen

// FindPeakFinished is find-peak's end of bisection, for searches built on
// the same procedure outside a LoadGen run (package sweep's goodput
// search): the bounds agree to decimals places when floor(l·10^d) + 1 ≥
// floor(u·10^d) (LoadGen's FindPeakPerformanceMode).
func FindPeakFinished(lower, upper float64, decimals int) bool {
	return findPeakFinished(lower, upper, decimals)
}
