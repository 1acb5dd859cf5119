package steady

import (
	"slices"

	"aimeter/loadgen"
)

// The analyses read their records through a loadgen.RecordAccess (a run's
// pass: loadgen.Result.PassAccess, a view of the pass's own storage or of
// the records read back from a bundle), by position and by column, so that
// a long run's report holds no []loadgen.Record of it (96 bytes a record:
// issue 43). The functions that take a []loadgen.Record put it in a
// loadgen.RecordTable first and give the same results.

// tableOf puts recs in a table, in their order.
func tableOf(recs []loadgen.Record) *loadgen.RecordTable {
	t := loadgen.NewRecordTable(len(recs))
	t.Append(recs...)
	return t
}

// scanBlock is how many records a sequential scan of a table decodes at a
// time.
const scanBlock = 4096

// SeqSet is a set of sequence ids, such as a window's Samples: one bit
// each from the least when they are dense, as a pass's are (a map took
// about 40 bytes a record of a long run's report: issue 43), a map when
// they are scattered (bits for more than a few words a sequence id). The
// nil *SeqSet holds every sequence id.
type SeqSet struct {
	lo        uint64
	bits      []uint64
	scattered map[uint64]bool
}

// NewSeqSet returns the set of seqs; nil seqs is every sequence id (the
// nil *SeqSet), an empty non-nil one none.
func NewSeqSet(seqs []uint64) *SeqSet {
	if seqs == nil {
		return nil
	}
	s := &SeqSet{}
	if len(seqs) == 0 {
		return s
	}
	s.lo = slices.Min(seqs)
	if words := (slices.Max(seqs)-s.lo)/64 + 1; words <= 4*uint64(len(seqs))+1024 {
		s.bits = make([]uint64, words)
		for _, q := range seqs {
			s.bits[(q-s.lo)/64] |= 1 << ((q - s.lo) % 64)
		}
		return s
	}
	s.scattered = make(map[uint64]bool, len(seqs))
	for _, q := range seqs {
		s.scattered[q] = true
	}
	return s
}

// Has reports whether seq is in s.
func (s *SeqSet) Has(seq uint64) bool {
	switch {
	case s == nil:
		return true
	case s.scattered != nil:
		return s.scattered[seq]
	}
	i := seq - s.lo
	return seq >= s.lo && i/64 < uint64(len(s.bits)) && s.bits[i/64]&(1<<(i%64)) != 0
}
