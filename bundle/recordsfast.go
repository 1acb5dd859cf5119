package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"aimeter/bundle/internal/ordered"
	"aimeter/loadgen"
)

// The records.csv writer and reader below work on blocks of rows so that
// formatting and parsing run on every core while one goroutine keeps the
// rows in order. The row format is the one WriteRecords documents; the
// tests check the fast formatter against a plain strconv formatter and the
// fast parser against parseRecord, which stays the reference for every
// error message.

// recordBlock is the number of records formatted as one block: large
// enough that the per-block hand-offs cost nothing per row, small enough
// that a block's records (72 B each) and text stay in the L2/L3 cache.
const recordBlock = 1 << 14

// maxRecordRow bounds the length of one formatted records.csv row: three
// unsigned 64-bit fields (20 digits), five signed ones (20 digits and a
// sign), the longest status ("error"), eight commas and the newline.
const maxRecordRow = 3*20 + 5*21 + 5 + 8 + 1

// digitPairs holds "00" to "99", so that two decimal digits are written
// per division.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// pow10 holds 10^0 to 10^19; it is a read-only table.
var pow10 = [20]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19}

// decimalLen returns the number of decimal digits of v (1 for 0).
func decimalLen(v uint64) int {
	// bits.Len64(v)·1233/4096 is log10(2^len), which is the number of
	// digits of v or one more.
	x := v | 1 // 0 has one digit, as 1 has
	t := bits.Len64(x) * 1233 >> 12
	if x < pow10[t] {
		return t
	}
	return t + 1
}

// putUint writes v in decimal at the start of d, which must have room for
// 20 bytes, and returns the number of bytes written. One-digit values,
// common for ids, tokens and Offline's scheduled time, are written inline.
func putUint(d []byte, v uint64) int {
	if v < 10 {
		d[0] = byte('0' + v)
		return 1
	}
	return putUintLong(d, v)
}

// putUintLong is putUint for v ≥ 10: the digits go straight to their
// place, four per division by 10000.
func putUintLong(d []byte, v uint64) int {
	n := decimalLen(v)
	_ = d[n-1]
	i := n
	for v >= 10000 {
		q := v / 10000
		r := v - q*10000
		hi, lo := (r/100)*2, (r%100)*2
		i -= 4
		d[i], d[i+1], d[i+2], d[i+3] = digitPairs[hi], digitPairs[hi+1], digitPairs[lo], digitPairs[lo+1]
		v = q
	}
	if v >= 100 {
		q := v / 100
		r := (v - q*100) * 2
		i -= 2
		d[i], d[i+1] = digitPairs[r], digitPairs[r+1]
		v = q
	}
	if v >= 10 {
		d[0], d[1] = digitPairs[v*2], digitPairs[v*2+1]
	} else {
		d[0] = byte('0' + v)
	}
	return n
}

// putInt writes v in decimal, with a '-' when negative, at the start of d
// (room for 21 bytes) and returns the number of bytes written.
func putInt(d []byte, v int64) int {
	if v >= 0 {
		return putUint(d, uint64(v))
	}
	d[0] = '-'
	return 1 + putUintLong(d[1:], -uint64(v)) // -uint64 is exact for MinInt64 too
}

// putTime is putInt with loadgen.NoTime written as nothing.
func putTime(d []byte, t int64) int {
	if uint64(t) < 10 {
		d[0] = byte('0' + t)
		return 1
	}
	if t == loadgen.NoTime {
		return 0
	}
	return putInt(d, t)
}

// appendRecordBlock appends the records.csv rows of recs to b.
func appendRecordBlock(b []byte, recs []loadgen.Record) []byte {
	for i := range recs {
		r := &recs[i]
		if cap(b)-len(b) < maxRecordRow {
			b = slices.Grow(b, max(maxRecordRow, (len(recs)-i)*maxRecordRow/4))
		}
		n := len(b)
		d := b[n : n+maxRecordRow]
		k := putUint(d, r.SeqID)
		d[k] = ','
		k++
		k += putUint(d[k:], r.QueryID)
		d[k] = ','
		k++
		k += putUint(d[k:], r.SampleIndex)
		d[k] = ','
		k++
		k += putTime(d[k:], r.ScheduledNs)
		d[k] = ','
		k++
		k += putTime(d[k:], r.IssuedNs)
		d[k] = ','
		k++
		k += putTime(d[k:], r.FirstTokenNs)
		d[k] = ','
		k++
		k += putTime(d[k:], r.CompletedNs)
		d[k] = ','
		k++
		k += putInt(d[k:], r.Tokens)
		d[k] = ','
		k++
		switch r.Status { // written byte by byte: a copy would call memmove
		case loadgen.StatusOK:
			d[k], d[k+1] = 'o', 'k'
			k += 2
		case loadgen.StatusError:
			d[k], d[k+1], d[k+2], d[k+3], d[k+4] = 'e', 'r', 'r', 'o', 'r'
			k += 5
		case loadgen.StatusLost:
			d[k], d[k+1], d[k+2], d[k+3] = 'l', 'o', 's', 't'
			k += 4
		default:
			k += copy(d[k:], r.Status.String())
		}
		d[k] = '\n'
		b = b[:n+k+1]
	}
	return b
}

// recordChunk is one block of records on its way through writeRecords.
type recordChunk struct {
	recs []loadgen.Record
	out  []byte
	done chan struct{} // receives once out holds the formatted rows
}

// writeRecords writes records.csv to w with the rows formatted by workers
// goroutines. The calling goroutine pulls records from recs into blocks,
// the workers format whole blocks, and one writer goroutine writes the
// blocks in order, one Write call per block. At most workers+2 blocks
// exist at a time and they are reused, so memory stays a few MiB however
// many records there are, and nothing is allocated per record. After a
// failed Write the remaining records are not pulled.
func writeRecords(w io.Writer, recs iter.Seq[loadgen.Record], workers int) error {
	workers = max(workers, 1)
	slots := workers + 2 // one filling, one writing, one per worker
	free := make(chan *recordChunk, slots)
	work := make(chan *recordChunk, slots)
	order := make(chan *recordChunk, slots)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range work {
				if cap(c.out) == 0 {
					// Typical rows are under 64 bytes; longer ones grow
					// the buffer once.
					c.out = make([]byte, 0, len(c.recs)*64)
				}
				c.out = appendRecordBlock(c.out[:0], c.recs)
				c.done <- struct{}{}
			}
		})
	}
	writeErr := make(chan error, 1)
	go func() {
		_, err := io.WriteString(w, RecordsHeader+"\n")
		if err != nil {
			failed.Store(true)
		}
		for c := range order {
			<-c.done
			if err == nil {
				if _, err = w.Write(c.out); err != nil {
					failed.Store(true)
				}
			}
			c.recs = c.recs[:0]
			free <- c
		}
		writeErr <- err
	}()

	made := 0
	next := func() *recordChunk {
		select {
		case c := <-free:
			return c
		default:
		}
		if made < slots {
			made++
			// The first block grows with the records so that a short
			// run does not pay for a whole block.
			if made == 1 {
				return &recordChunk{recs: make([]loadgen.Record, 0, 256), done: make(chan struct{}, 1)}
			}
			return &recordChunk{recs: make([]loadgen.Record, 0, recordBlock), done: make(chan struct{}, 1)}
		}
		return <-free
	}
	send := func(c *recordChunk) {
		work <- c
		order <- c
	}
	func() {
		// Closing in a deferred call ends the goroutines even if the
		// iterator panics.
		defer func() {
			close(work)
			close(order)
		}()
		if failed.Load() {
			return
		}
		c := next()
		for rec := range recs {
			c.recs = append(c.recs, rec)
			if len(c.recs) == recordBlock {
				send(c)
				if failed.Load() {
					return
				}
				c = next()
			}
		}
		if len(c.recs) > 0 {
			send(c)
		}
	}()
	wg.Wait()
	return <-writeErr
}

// readChunkSize is how many bytes of records.csv are parsed as one block.
const readChunkSize = 1 << 20

// parseChunk is one block of records.csv on its way through readRecords.
type parseChunk struct {
	data      []byte
	firstLine int  // line number of the first line in data
	last      bool // data ends the input
	recs      []loadgen.Record
	err       error
	done      chan struct{}
}

// readRecords is ReadRecords with the parsing spread over workers
// goroutines: the calling goroutine reads blocks of whole lines, the
// workers parse them, and the blocks' records are appended in order. It
// returns exactly what a line-by-line parse returns, including the records
// before the first bad line.
func readRecords(r io.Reader, workers int) ([]loadgen.Record, error) {
	workers = max(workers, 1)
	slots := 2*workers + 2
	free := make(chan *parseChunk, slots)
	work := make(chan *parseChunk, slots)
	order := make(chan *parseChunk, slots)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range work {
				// A fresh slice per block, sized by its line count, so
				// that the result is assembled with one exact copy.
				recs := make([]loadgen.Record, 0, bytes.Count(c.data, []byte{'\n'})+1)
				c.recs, c.err = parseRecordLines(recs, c.data, c.firstLine, c.last)
				c.done <- struct{}{}
			}
		})
	}
	for range slots {
		free <- &parseChunk{data: make([]byte, 0, readChunkSize+maxRecordLine), done: make(chan struct{}, 1)}
	}

	type outcome struct {
		blocks [][]loadgen.Record
		err    error
		lines  int // lines seen, header included
	}
	result := make(chan outcome, 1)
	go func() {
		var out outcome
		for c := range order {
			<-c.done
			if out.err == nil {
				out.blocks = append(out.blocks, c.recs)
				out.err = c.err
				out.lines = c.firstLine - 1 + bytes.Count(c.data, []byte{'\n'})
				if c.last && len(c.data) > 0 && c.data[len(c.data)-1] != '\n' {
					out.lines++
				}
				if out.err != nil {
					stop.Store(true)
				}
			}
			c.recs = nil
			free <- c
		}
		result <- out
	}()

	readErr := func() error {
		defer func() {
			close(work)
			close(order)
		}()
		var carry []byte // an unfinished line from the previous block
		line := 1
		for !stop.Load() {
			c := <-free
			c.data = append(c.data[:0], carry...)
			n, err := io.ReadAtLeast(r, c.data[len(c.data):cap(c.data)], cap(c.data)-len(c.data))
			c.data = c.data[:len(c.data)+n]
			switch {
			case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
				c.last = true
			case err != nil:
				free <- c
				return err
			default:
				c.last = false
			}
			carry = carry[:0]
			if !c.last {
				// Hand over whole lines only; a block without a newline
				// holds a line too long to be valid, which the parser
				// reports before anything after it matters.
				if i := bytes.LastIndexByte(c.data, '\n'); i >= 0 {
					carry = append(carry, c.data[i+1:]...)
					c.data = c.data[:i+1]
				}
			}
			c.firstLine = line
			line += bytes.Count(c.data, []byte{'\n'})
			work <- c
			order <- c
			if c.last {
				return nil
			}
		}
		return nil
	}()
	wg.Wait()
	out := <-result
	n := 0
	for _, b := range out.blocks {
		n += len(b)
	}
	var recs []loadgen.Record
	if n > 0 {
		recs = make([]loadgen.Record, 0, n)
		for i, b := range out.blocks {
			recs = append(recs, b...)
			out.blocks[i] = nil // let the collector free it
		}
	}
	switch {
	case out.err != nil:
		if re, ok := out.err.(*RecordsError); ok && re.Line == 1 {
			return nil, out.err
		}
		return recs, out.err
	case readErr != nil:
		return recs, readErr
	case out.lines == 0:
		return nil, &RecordsError{Line: 1, Msg: "empty file: missing header"}
	}
	return recs, nil
}

// parseRecordLines parses the lines of data, the first of which is line
// firstLine of records.csv (the header when firstLine is 1), appending the
// records to recs. data holds whole lines, the last one unterminated only
// when last is set. It stops at the first bad line and returns the records
// before it with the error.
func parseRecordLines(recs []loadgen.Record, data []byte, firstLine int, last bool) ([]loadgen.Record, error) {
	lineNo := firstLine
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var line []byte
		size := i + 1
		if i < 0 {
			line, size = data, len(data)
		} else {
			line = data[:i]
		}
		if size > maxRecordLine || (i < 0 && !last) {
			return recs, &RecordsError{Line: lineNo, Msg: fmt.Sprintf("line longer than %d bytes", maxRecordLine)}
		}
		data = data[size:]
		if lineNo == 1 {
			if string(line) != RecordsHeader {
				return recs, &RecordsError{Line: 1, Msg: fmt.Sprintf("header is %q, want %q", truncateField(line), RecordsHeader)}
			}
		} else if rec, ok := parseRecordFast(line); ok {
			recs = append(recs, rec)
		} else {
			rec, err := parseRecord(line, lineNo)
			if err != nil {
				return recs, err
			}
			recs = append(recs, rec)
		}
		lineNo++
	}
	return recs, nil
}

// parseRecordFast parses a records.csv row that holds only what
// WriteRecords writes, with no field longer than 18 digits, so that no
// overflow is possible. Any other line, valid or not, is left to
// parseRecord (ok false), which then gives the same result or the error.
func parseRecordFast(line []byte) (rec loadgen.Record, ok bool) {
	var v [8]int64
	p := 0
	for f := range v {
		neg := false
		if f >= 3 && p < len(line) && line[p] == '-' {
			neg = true
			p++
		}
		start := p
		var x int64
		for p < len(line) && line[p] >= '0' && line[p] <= '9' {
			x = x*10 + int64(line[p]-'0')
			p++
		}
		digits := p - start
		if p >= len(line) || line[p] != ',' || digits > 18 {
			return rec, false
		}
		if digits == 0 {
			// Only the four times may be empty, and not after a '-'.
			if f < 3 || f == 7 || neg {
				return rec, false
			}
			x = loadgen.NoTime
		} else if neg {
			x = -x
		}
		v[f] = x
		p++
	}
	if rec.Status.UnmarshalText(line[p:]) != nil {
		return rec, false
	}
	rec.SeqID, rec.QueryID, rec.SampleIndex = uint64(v[0]), uint64(v[1]), uint64(v[2])
	rec.ScheduledNs, rec.IssuedNs, rec.FirstTokenNs, rec.CompletedNs, rec.Tokens = v[3], v[4], v[5], v[6], v[7]
	return rec, true
}

// defaultWorkers is the number of formatting or parsing goroutines.
func defaultWorkers() int { return runtime.GOMAXPROCS(0) }

// writeRecordChunks writes records.csv from chunks, contiguous parts of
// the records in order (loadgen.Result.RecordChunks): workers each take
// the next chunk, pull its records and format them into a buffer of their
// own, and the calling goroutine writes the buffers in chunk order. Pulling
// the records is then spread over the cores too. At most workers+2 buffers
// exist at once.
func writeRecordChunks(w io.Writer, chunks []iter.Seq[loadgen.Record], workers int) error {
	if _, err := io.WriteString(w, RecordsHeader+"\n"); err != nil {
		return err
	}
	return ordered.Encode(len(chunks), workers,
		func() func(int, []byte) ([]byte, struct{}, error) {
			batch := make([]loadgen.Record, 0, 1024)
			return func(k int, buf []byte) ([]byte, struct{}, error) {
				for rec := range chunks[k] {
					batch = append(batch, rec)
					if len(batch) == cap(batch) {
						buf = appendRecordBlock(buf, batch)
						batch = batch[:0]
					}
				}
				buf = appendRecordBlock(buf, batch)
				batch = batch[:0]
				return buf, struct{}{}, nil
			}
		},
		func(data []byte, _ struct{}) error {
			_, err := w.Write(data)
			return err
		})
}
