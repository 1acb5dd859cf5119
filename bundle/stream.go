package bundle

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"aimeter/bundle/internal/parquet"
	"aimeter/loadgen"
)

// RecordStream writes a run's records file while the run goes: its Add is
// loadgen.Options.Records, and Write, given the stream in Bundle.Records,
// finishes the file instead of writing every record at the end. The
// records are cut into row groups of DefaultRowGroupRows as they come;
// each full row group is encoded by one of a few workers and appended to
// the file, hashed on the way, in order. When the run ends only the last
// row group and the derived files remain. Memory stays at a few row
// groups: Add blocks while the workers are that far behind (it holds up
// only loadgen's sender, never the run).
type RecordStream struct {
	dir   string
	rows  int                    // records a row group
	cur   *loadgen.RecordColumns // the row group being filled
	free  chan *loadgen.RecordColumns
	work  chan *streamGroup // to the encoders
	order chan *streamGroup // to the file, in order
	abort chan struct{}
	done  chan struct{}
	entry ManifestEntry
	err   error
	count int
	// beside are the raw files written beside the records
	// (WriteSamples, WriteTokens), by name.
	beside map[string]ManifestEntry

	closeOnce sync.Once
}

// streamGroup is one row group on its way to the file.
type streamGroup struct {
	cols *loadgen.RecordColumns
	enc  parquet.EncodedGroup // the row group, encoded
	err  error
	done chan struct{}
}

// streamAhead row groups more than the workers encode may wait.
const streamAhead = 2

// streamWorkers is the number of row-group encoders: one less than the
// processors Go may use, one to two. The run's issuer needs a processor of
// its own (a Server issuer spins towards each scheduled time): two encoders
// on a 2-core machine would take a third of it while records pour in.
func streamWorkers() int { return min(2, max(1, runtime.GOMAXPROCS(0)-1)) }

// errStreamDiscarded ends the file of a discarded stream.
var errStreamDiscarded = errors.New("bundle: record stream discarded")

// NewRecordStream starts writing the records file of a bundle in dir (a
// temporary file, renamed into place when Write finishes it; dir is made
// if needed, and an error in writing is Write's). The caller must hand it
// to Write in Bundle.Records, or Discard it.
func NewRecordStream(dir string) *RecordStream {
	workers := streamWorkers()
	s := &RecordStream{
		dir:   dir,
		rows:  DefaultRowGroupRows,
		free:  make(chan *loadgen.RecordColumns, workers+streamAhead+1),
		work:  make(chan *streamGroup, workers+streamAhead),
		order: make(chan *streamGroup, workers+streamAhead),
		abort: make(chan struct{}),
		done:  make(chan struct{}),
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			enc := parquet.NewGroupEncoder() // the default options: zstd
			for g := range s.work {
				// The group's columns become the encoder's, and its empty
				// ones go back with the group to be reused.
				g.enc, g.err = enc.Encode(g.cols)
				close(g.done)
			}
		})
	}
	go func() {
		defer close(s.done)
		wf, err := writeFile(dir, RecordsFile, func(w io.Writer) error {
			rw := NewRecordWriter(w, RecordWriterOptions{})
			var err error
			for g := range s.order {
				<-g.done
				if err == nil {
					err = g.err
				}
				if err == nil && g.enc.Rows() > 0 {
					err = rw.WriteGroup(g.enc)
				}
				g.enc = parquet.EncodedGroup{}
				g.cols.Reset()
				select {
				case s.free <- g.cols:
				default:
				}
			}
			if err != nil {
				return err
			}
			select {
			case <-s.abort:
				return errStreamDiscarded
			default:
			}
			return rw.Close()
		})
		s.entry = ManifestEntry{Name: RecordsFile, Role: Raw, Bytes: wf.Bytes, SHA256: wf.SHA256}
		s.err = err
		// writeFile failed before reading the row groups: let them go.
		for g := range s.order {
			<-g.done
		}
		wg.Wait()
	}()
	return s
}

// Add queues a copy of recs for the file; it is loadgen.Options.Records.
// Calls must come one at a time, in the order of the records.
func (s *RecordStream) Add(recs []loadgen.Record) {
	s.count += len(recs)
	for len(recs) > 0 {
		cur := s.group()
		n := min(len(recs), s.rows-cur.Len())
		cur.Append(recs[:n]...)
		recs = recs[n:]
		if cur.Len() == s.rows {
			s.send()
		}
	}
}

// AddColumns queues a copy of the records in c for the file; it is
// loadgen.Options.RecordColumns, which costs less than Add's records
// (taken apart into columns again for the file). Calls must come one at a
// time, in the order of the records.
func (s *RecordStream) AddColumns(c *loadgen.RecordColumns) {
	n := c.Len()
	s.count += n
	for at := 0; at < n; {
		cur := s.group()
		k := min(n-at, s.rows-cur.Len())
		cur.AppendRange(c, at, at+k)
		at += k
		if cur.Len() == s.rows {
			s.send()
		}
	}
}

// group returns the row group being filled, starting one if needed.
func (s *RecordStream) group() *loadgen.RecordColumns {
	if s.cur == nil {
		select {
		case s.cur = <-s.free:
		default:
			s.cur = new(loadgen.RecordColumns)
			s.cur.Grow(s.rows)
		}
	}
	return s.cur
}

// send hands the row group being filled to an encoder and to the file.
func (s *RecordStream) send() {
	g := &streamGroup{cols: s.cur, done: make(chan struct{})}
	s.cur = nil
	s.order <- g
	s.work <- g
}

// Count is the number of records added.
func (s *RecordStream) Count() int { return s.count }

// end sends the last row group and closes the pipeline.
func (s *RecordStream) end() {
	if s.cur != nil && s.cur.Len() > 0 {
		s.send()
	}
	close(s.work)
	close(s.order)
}

// finish ends the file and returns its manifest entry.
func (s *RecordStream) finish() (ManifestEntry, error) {
	s.closeOnce.Do(s.end)
	<-s.done
	for { // the row groups kept for reuse go
		select {
		case <-s.free:
			continue
		default:
		}
		break
	}
	return s.entry, s.err
}

// Finish ends the records file now, before Write: the last row group is
// written and the file renamed into place (RecordsFile in the stream's
// directory), whose path it returns, so that the records can be read
// back from it (OpenRecordFile) while the derived files are written. No
// Add may follow. Write, given the stream in Bundle.Records, then lists
// the file as it is.
func (s *RecordStream) Finish() (string, error) {
	if _, err := s.finish(); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, RecordsFile), nil
}

// Discard ends the stream without a file: its temporary file is removed,
// and so are the files written beside it (WriteSamples, WriteTokens).
// It is for a run whose bundle is not written; after Write it does
// nothing.
func (s *RecordStream) Discard() {
	s.closeOnce.Do(func() {
		close(s.abort)
		s.cur = nil
		s.end()
		for name := range s.beside { // written beside: they go too
			_ = os.Remove(filepath.Join(s.dir, name))
		}
	})
	<-s.done
}
