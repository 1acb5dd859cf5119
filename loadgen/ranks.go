package loadgen

import (
	"errors"
	"slices"
)

// ValueScan streams a multiset of values: it calls add with each, in any
// order, and returns an error that ended the reading early. It must give
// the same values each time it is called.
type ValueScan func(add func(int64)) error

// RanksOfScan returns the values at the given ranks (0 is the smallest;
// rank i is element i of the values sorted in ascending order) of the
// values scan streams, and their count, reading them several times in
// memory that does not depend on their number, as SummarizePassScan reads
// latencies: a first reading counts them and finds their extremes, each
// later one narrows every rank's range by a histogram of at most 65,536
// buckets until a range holds at most 65,536 values, which are sorted;
// seven readings at most. Ranks outside [0, count) are an error. The
// values are those a sort of them all gives, exactly.
func RanksOfScan(scan ValueScan, ranks []int64) (values []int64, count int64, err error) {
	var v valueStat
	if err := scan(v.scalar); err != nil {
		return nil, 0, err
	}
	for _, r := range ranks {
		if r < 0 || r >= v.n {
			return nil, v.n, errors.New("loadgen: a rank outside the values read")
		}
	}
	v.want(ranks)
	for range maxScanReadings {
		if v.sel.done() {
			break
		}
		v.sel.begin()
		if err := scan(v.sel.add); err != nil {
			return nil, v.n, err
		}
		v.sel.end()
	}
	if !v.sel.done() {
		return nil, v.n, errors.New("loadgen: the ranks were not found (the values changed between readings?)")
	}
	values = make([]int64, len(ranks))
	for i, r := range ranks {
		values[i] = v.sel.at(r)
	}
	return slices.Clip(values), v.n, nil
}
