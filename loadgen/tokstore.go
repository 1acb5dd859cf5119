package loadgen

import (
	"encoding/binary"
	"sync"
)

// tokenBlockLen is the size of one block of a tokenStore: a sample's token
// times go into the current block, or into a new one when they do not fit.
const tokenBlockLen = 64 << 10

// tokenStore holds the token arrival times of a pass's streamed samples
// (Response.TokenTimes) compactly: each sample's times as uvarints (their
// count, the first time after the sample's issue, then each gap to the
// previous time) appended to shared blocks of tokenBlockLen bytes. Streamed
// answers of 16 tokens arriving microseconds to milliseconds apart take
// 20 to 50 bytes this way, where a cloned []int64 took a 24-byte slice
// header in the column, a 128-byte array and the collector's work on one
// more object per sample: the largest share of a network run's memory
// (issue 43). Times are exact; decoding allocates a fresh slice.
//
// Writers (completers, from any goroutine) append under mu; a sample's
// reference is published in the pass's tokRef column before its final
// state, so a reader that saw that state sees its bytes.
type tokenStore struct {
	mu     sync.Mutex
	blocks [][]byte
}

// put encodes tt, whose times are non-decreasing and not before issued
// (tokenTimesPossible), and returns its reference: 1 + the block index
// shifted left by 32 bits + the offset in the block, never 0.
func (s *tokenStore) put(tt []int64, issued int64) uint64 {
	// The most bytes the encoding takes: one uvarint per time and the count.
	most := (len(tt) + 1) * binary.MaxVarintLen64
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.blocks)
	if n == 0 || cap(s.blocks[n-1])-len(s.blocks[n-1]) < most {
		s.blocks = append(s.blocks, make([]byte, 0, max(tokenBlockLen, most)))
		n++
	}
	b := s.blocks[n-1]
	off := len(b)
	b = binary.AppendUvarint(b, uint64(len(tt)))
	prev := issued
	for _, t := range tt {
		b = binary.AppendUvarint(b, uint64(t-prev))
		prev = t
	}
	s.blocks[n-1] = b
	return 1 + uint64(n-1)<<32 + uint64(off)
}

// get decodes the token times of reference ref (from put, with the same
// issued) into a new slice.
func (s *tokenStore) get(ref uint64, issued int64) []int64 {
	return decodeTokens(s.view(), ref, issued)
}

// view returns the blocks as they are now: the references put so far
// point into them, and their bytes do not change.
func (s *tokenStore) view() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocks
}

// decodeTokens decodes the token times of reference ref (from put, with
// the same issued) from blocks (a view taken after the put) into a new
// slice.
func decodeTokens(blocks [][]byte, ref uint64, issued int64) []int64 {
	ref--
	b := blocks[ref>>32][uint32(ref):]
	n, k := binary.Uvarint(b)
	b = b[k:]
	out := make([]int64, n)
	prev := issued
	for j := range out {
		d, k := binary.Uvarint(b)
		b = b[k:]
		prev += int64(d)
		out[j] = prev
	}
	return out
}
