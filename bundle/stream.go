package bundle

import (
	"errors"
	"io"
	"sync"

	"aimeter/loadgen"
)

// RecordStream writes a run's records file while the run goes: its Add is
// loadgen.Options.Records, and Write, given the stream in Bundle.Records,
// finishes the file instead of writing every record at the end. The
// records are formatted and hashed on a goroutine of the stream's, a few
// thousand at a time, so that when the run ends only the last of them and
// the derived files remain. Memory stays at a few batches of records: Add
// blocks while the writer is that far behind (it holds up only loadgen's
// sender, never the run).
type RecordStream struct {
	dir     string
	batches chan []loadgen.Record
	free    chan []loadgen.Record
	abort   chan struct{}
	done    chan struct{}
	entry   ManifestEntry
	err     error
	count   int

	closeOnce sync.Once
}

// streamBatches is how many batches of records may wait for the writer.
const streamBatches = 8

// errStreamDiscarded ends the file of a discarded stream.
var errStreamDiscarded = errors.New("bundle: record stream discarded")

// NewRecordStream starts writing the records file of a bundle in dir (a
// temporary file, renamed into place when Write finishes it; dir is made
// if needed, and an error in writing is Write's). The caller must hand it
// to Write in Bundle.Records, or Discard it.
func NewRecordStream(dir string) *RecordStream {
	s := &RecordStream{
		dir:     dir,
		batches: make(chan []loadgen.Record, streamBatches),
		free:    make(chan []loadgen.Record, streamBatches+1),
		abort:   make(chan struct{}),
		done:    make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		wf, err := writeFile(dir, RecordsFile, func(w io.Writer) error {
			rw := NewRecordWriter(w, RecordWriterOptions{})
			var err error
			for b := range s.batches {
				if err == nil {
					err = rw.Write(b)
				}
				select {
				case s.free <- b[:0]:
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
		// Whatever is still sent is dropped (writeFile failed first).
		for range s.batches {
		}
	}()
	return s
}

// Add queues a copy of recs for the file; it is loadgen.Options.Records.
// Calls must come one at a time, in the order of the records.
func (s *RecordStream) Add(recs []loadgen.Record) {
	var b []loadgen.Record
	select {
	case b = <-s.free:
	default:
		b = make([]loadgen.Record, 0, len(recs))
	}
	b = append(b, recs...)
	s.count += len(recs)
	s.batches <- b
}

// Count is the number of records added.
func (s *RecordStream) Count() int { return s.count }

// finish ends the file and returns its manifest entry.
func (s *RecordStream) finish() (ManifestEntry, error) {
	s.closeOnce.Do(func() { close(s.batches) })
	<-s.done
	return s.entry, s.err
}

// Discard ends the stream without a file: its temporary file is removed.
// It is for a run whose bundle is not written; after Write it does
// nothing.
func (s *RecordStream) Discard() {
	s.closeOnce.Do(func() {
		close(s.abort)
		close(s.batches)
	})
	<-s.done
}
