package sweep

// findPeak is LoadGen's find-peak procedure over a concurrency or a
// request rate: probe start (PhaseCheck); while the bracket's lower end
// passes and is below max, double it (PhaseWiden, capped at max); then
// halve the bracket (PhaseBisect) until done says its ends are close
// enough. pass runs one probe and says whether it met the target. best is
// the last value that passed and found says one did (best is zero when
// none did); stop is StopFound,
// StopLimit (every probe up to max passed), StopNone (start failed) or
// StopPartial, returned with the error of the probe that failed to run.
func findPeak[T uint64 | float64](start, max T, pass func(v T, phase string) (bool, error), done func(lower, upper T) bool) (best T, found bool, stop string, err error) {
	ok, err := pass(start, PhaseCheck)
	if err != nil {
		return best, found, StopPartial, err
	}
	if !ok {
		return best, found, StopNone, nil
	}
	lower := start
	best, found = lower, true
	var upper T
	for {
		if lower >= max {
			return best, found, StopLimit, nil
		}
		u := min(2*lower, max)
		ok, err := pass(u, PhaseWiden)
		if err != nil {
			return best, found, StopPartial, err
		}
		if !ok {
			upper = u
			break
		}
		lower = u
		best = lower
	}
	for !done(lower, upper) {
		mid := lower + (upper-lower)/2
		ok, err := pass(mid, PhaseBisect)
		if err != nil {
			return best, found, StopPartial, err
		}
		if ok {
			lower = mid
			best = lower
		} else {
			upper = mid
		}
	}
	return best, found, StopFound, nil
}
