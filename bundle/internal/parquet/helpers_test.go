package parquet

import "aimeter/loadgen"

// benchRecords is a million Offline-like records: one query, times of
// typical length, every sample completed (as package bundle's tests).
func benchRecords() []loadgen.Record {
	recs := make([]loadgen.Record, 1_000_000)
	for i := range recs {
		recs[i] = loadgen.Record{SeqID: uint64(i), QueryID: uint64(i), SampleIndex: uint64(i % 24576),
			ScheduledNs: int64(i) * 1_000_000, IssuedNs: int64(i)*1_000_000 + 1234, FirstTokenNs: loadgen.NoTime,
			CompletedNs: int64(i)*1_000_000 + 98_765_432, Tokens: 0, Status: loadgen.StatusOK}
	}
	return recs
}

// countWriter counts the bytes written to it.
type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
