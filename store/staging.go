package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Crash safety of the result files. Each Store stages the files of the runs
// it ingests in a directory of its own under FilesDir/.staging, <owner>/,
// and holds an advisory lock on <owner>.lock beside it from its first
// Ingest until Close, so that a Store opened later on the same files directory, by this
// process or another, can tell a live owner from a dead one. Before Ingest
// moves a run's directory into place (just before its transaction commits)
// it writes <owner>/<run key>.pending naming the directory; it removes the
// marker once the transaction has committed, or the directory and the
// marker once it has not. Open sweeps the staging directories of dead
// owners: for each marker whose run has no row it removes the result
// directory, which the killed process moved into place without committing.

// pendingSuffix ends the name of a marker of a result directory moved into
// place whose transaction has not committed yet.
const pendingSuffix = ".pending"

// lockSuffix ends the name of an owner's lock file.
const lockSuffix = ".lock"

// staging is a Store's own staging directory and the lock that says its
// owner is alive.
type staging struct {
	dir  string
	lock *os.File
}

// ownStaging returns the store's own staging directory, made and locked
// by the first call (so that a store only read never writes to the files
// directory).
func (s *Store) ownStaging() (string, error) {
	s.stagingMu.Lock()
	defer s.stagingMu.Unlock()
	if s.staging.lock == nil {
		if err := s.openStaging(); err != nil {
			return "", err
		}
	}
	return s.staging.dir, nil
}

// openStaging makes a staging directory of the store's own, locked.
func (s *Store) openStaging() error {
	root := filepath.Join(s.filesDir, stagingDir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	for try := 0; ; try++ {
		var r [8]byte
		rand.Read(r[:])
		name := hex.EncodeToString(r[:])
		lockPath := filepath.Join(root, name+lockSuffix)
		f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("store: staging lock: %w", err)
		}
		ok, err := tryLock(f)
		if ok {
			// A sweep of another Store that locked the new file
			// before this one took it for a dead owner's, and
			// removed it: try another name.
			fi, ferr := f.Stat()
			li, lerr := os.Stat(lockPath)
			ok = ferr == nil && lerr == nil && os.SameFile(fi, li)
		}
		if !ok {
			f.Close()
			if err == nil && try < 3 {
				continue
			}
			return fmt.Errorf("store: staging lock %s: %v", lockPath, err)
		}
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			f.Close()
			return fmt.Errorf("store: %w", err)
		}
		s.staging = staging{dir: dir, lock: f}
		return nil
	}
}

// closeStaging removes the store's staging directory and its lock.
func (s *Store) closeStaging() {
	s.stagingMu.Lock()
	defer s.stagingMu.Unlock()
	if s.staging.lock == nil {
		return
	}
	os.RemoveAll(s.staging.dir)
	os.Remove(s.staging.lock.Name())
	s.staging.lock.Close()
	s.staging.lock = nil
}

// markPending records, durably, in the staging directory dir, that the
// result directory rel (relative to FilesDir) is about to move into place
// for the run key.
func markPending(dir, key, rel string) error {
	p := filepath.Join(dir, key+pendingSuffix)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(rel); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// clearPending removes the marker of the run key from the staging
// directory dir.
func clearPending(dir, key string) {
	os.Remove(filepath.Join(dir, key+pendingSuffix))
}

// sweepStaging removes what interrupted Ingests of dead owners left: their
// staging directories, and each result directory a marker names whose run
// has no row. The staging directories of live owners (locked) stay.
func (s *Store) sweepStaging(ctx context.Context) error {
	root := filepath.Join(s.filesDir, stagingDir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	locks := map[string]bool{}
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), lockSuffix); ok {
			locks[name] = true
		}
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, lockSuffix) {
			if err := s.sweepOwner(ctx, root, strings.TrimSuffix(name, lockSuffix)); err != nil {
				return err
			}
			continue
		}
		if !locks[name] {
			// A staging directory of an earlier layout (one directory
			// per run key, no markers), or of an owner whose lock a
			// sweep removed already: nothing in it is in place. (An
			// owner makes its lock before its directory; the listing
			// may have missed a lock made while it was read.)
			if _, err := os.Stat(filepath.Join(root, name+lockSuffix)); errors.Is(err, os.ErrNotExist) {
				os.RemoveAll(filepath.Join(root, name))
			}
		}
	}
	return nil
}

// sweepOwner sweeps the staging directory of the owner name when its lock
// is free.
func (s *Store) sweepOwner(ctx context.Context, root, name string) error {
	lockPath := filepath.Join(root, name+lockSuffix)
	f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if err != nil {
		return nil // swept by another Store meanwhile
	}
	defer f.Close()
	if ok, _ := tryLock(f); !ok {
		return nil // its owner is alive
	}
	dir := filepath.Join(root, name)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), pendingSuffix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		rel := string(b)
		if !safeName(rel) || !strings.Contains(rel, "/") {
			continue
		}
		var n int
		if err := s.db.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM runs WHERE dir = ?`), rel).Scan(&n); err != nil {
			return fmt.Errorf("store: sweep %s: %w", dir, err)
		}
		if n == 0 {
			if err := os.RemoveAll(s.Path(rel)); err != nil {
				return fmt.Errorf("store: sweep %s: %w", rel, err)
			}
		}
	}
	os.RemoveAll(dir)
	os.Remove(lockPath)
	return nil
}
