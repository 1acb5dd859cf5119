package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ManifestFile indexes a bundle: which aimeter wrote it, in which layout,
// and the size and SHA-256 of every other file.
const ManifestFile = "manifest.json"

// FormatName identifies a bundle's manifest.
const FormatName = "aimeter-bundle"

// FormatVersion is the layout version this package writes. Read accepts
// bundles of versions 1 to FormatVersion and says which aimeter wrote any
// other.
//
// Version 1: manifest.json, settings.json, run.json, events.jsonl,
// records.csv, mlperf_log_accuracy.json, and when used stages.csv,
// samples.csv, errors.json, tokens.csv, gbt_test.json and foreign/; or,
// for a training run, training_run.json, training_events.jsonl and when
// used training_stdout.log and training_stderr.log.
//
// Version 2: as version 1, with records.parquet (see docs/records.md) in
// place of records.csv.
//
// Version 3: as version 2, with stages.parquet, samples.parquet and
// tokens.parquet in place of stages.csv, samples.csv and tokens.csv (the
// same columns; docs/records.md).
const FormatVersion = 3

// minFormatVersion is the oldest layout version Read accepts.
const minFormatVersion = 1

// Role says whether a file is a raw part of the run or derived from the raw
// parts.
type Role string

// File roles.
const (
	// Raw files are what the run recorded; they are never rewritten.
	Raw Role = "raw"
	// Derived files are functions of the raw files; Regenerate writes them
	// again, byte for byte.
	Derived Role = "derived"
)

// ManifestEntry is one file of a bundle.
type ManifestEntry struct {
	Name   string `json:"name"` // slash-separated path inside the bundle
	Role   Role   `json:"role"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Manifest is manifest.json.
type Manifest struct {
	Format        string          `json:"format"`
	FormatVersion int             `json:"format_version"`
	Generator     string          `json:"generator"` // "aimeter <version>"
	Files         []ManifestEntry `json:"files"`
}

// Entry returns the entry of the named file.
func (m *Manifest) Entry(name string) (ManifestEntry, bool) {
	i := slices.IndexFunc(m.Files, func(e ManifestEntry) bool { return e.Name == name })
	if i < 0 {
		return ManifestEntry{}, false
	}
	return m.Files[i], true
}

// DigestError says that a file of a bundle is not the file its manifest
// lists: changed, truncated or missing.
type DigestError struct {
	Dir  string
	Name string
	// Want is the manifest's entry; Got the file's size and digest (zero
	// when the file is missing).
	Want        ManifestEntry
	GotBytes    int64
	GotSHA256   string
	Missing     bool
	ReadFailure error
}

func (e *DigestError) Error() string {
	path := filepath.Join(e.Dir, filepath.FromSlash(e.Name))
	switch {
	case e.Missing:
		return fmt.Sprintf("%s: listed in %s but missing", path, ManifestFile)
	case e.ReadFailure != nil:
		return fmt.Sprintf("%s: %v", path, e.ReadFailure)
	case e.GotBytes != e.Want.Bytes:
		return fmt.Sprintf("%s changed since the run wrote it: %d bytes, the manifest says %d (sha256 %s, the manifest says %s)",
			path, e.GotBytes, e.Want.Bytes, short(e.GotSHA256), short(e.Want.SHA256))
	}
	return fmt.Sprintf("%s changed since the run wrote it: sha256 %s, the manifest says %s", path, short(e.GotSHA256), short(e.Want.SHA256))
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// maxManifestSize bounds what ReadManifest reads.
const maxManifestSize = 16 << 20

// Digest returns the bundle's digest: the hex SHA-256 of the manifest in
// dir, which names every file's digest. The results store keys runs by it,
// and the tester's service takes it as an upload's idempotency key.
func Digest(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// ReadManifest reads dir's manifest.json. A directory without one, written
// by aimeter before bundles existed, gives an error that says which version
// wrote it (from settings.json) and what is missing.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, legacyError(dir)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxManifestSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxManifestSize)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Format != FormatName {
		return nil, fmt.Errorf("%s: format %q, want %q: not an aimeter run bundle", path, m.Format, FormatName)
	}
	if m.FormatVersion < minFormatVersion || m.FormatVersion > FormatVersion {
		return nil, fmt.Errorf("%s: bundle layout version %d written by %s; this aimeter reads versions %d to %d",
			path, m.FormatVersion, orUnknown(m.Generator), minFormatVersion, FormatVersion)
	}
	seen := make(map[string]bool, len(m.Files))
	for _, e := range m.Files {
		if !validName(e.Name) {
			return nil, fmt.Errorf("%s: file name %q is not a plain relative path", path, e.Name)
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("%s: %s listed twice", path, e.Name)
		}
		seen[e.Name] = true
		if e.Role != Raw && e.Role != Derived {
			return nil, fmt.Errorf("%s: %s: unknown role %q", path, e.Name, e.Role)
		}
	}
	return &m, nil
}

// validName accepts slash-separated relative paths without "." or ".."
// elements, so a manifest cannot point outside its bundle.
func validName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") {
		return false
	}
	for el := range strings.SplitSeq(name, "/") {
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return true
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown aimeter"
	}
	return s
}

// legacyError describes a run directory without a manifest.
func legacyError(dir string) error {
	ver := ""
	if f, err := os.Open(filepath.Join(dir, SettingsFile)); err == nil {
		var probe struct {
			Version string `json:"version"`
		}
		_ = json.NewDecoder(io.LimitReader(f, maxManifestSize)).Decode(&probe)
		f.Close()
		ver = probe.Version
		if ver == "" {
			ver = "unknown"
		}
		return fmt.Errorf("%s: no %s: this run directory was written by aimeter %s, before run bundles; "+
			"it lacks %s, %s and %s, so its derived files cannot be regenerated exactly: run the benchmark again with this aimeter",
			dir, ManifestFile, ver, ManifestFile, EventsFile, RunFile)
	}
	return fmt.Errorf("%s: not a run bundle: no %s or %s", dir, ManifestFile, SettingsFile)
}

// Verify checks every file that m lists against its size and SHA-256 and
// returns one *DigestError per file that differs or, for a raw file, is
// missing, joined. A missing derived file is not an error: regenerating
// the bundle writes it again.
func (m *Manifest) Verify(dir string) error {
	var errs []error
	for _, e := range m.Files {
		n, sum, err := digestFile(filepath.Join(dir, filepath.FromSlash(e.Name)))
		switch {
		case errors.Is(err, fs.ErrNotExist) && e.Role == Derived:
			// A derived file that is gone is only to be made again.
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, &DigestError{Dir: dir, Name: e.Name, Want: e, Missing: true})
		case err != nil:
			errs = append(errs, &DigestError{Dir: dir, Name: e.Name, Want: e, ReadFailure: err})
		case n != e.Bytes || sum != e.SHA256:
			errs = append(errs, &DigestError{Dir: dir, Name: e.Name, Want: e, GotBytes: n, GotSHA256: sum})
		}
	}
	return errors.Join(errs...)
}

func writeManifest(dir string, m *Manifest) error {
	slices.SortFunc(m.Files, func(a, b ManifestEntry) int { return strings.Compare(a.Name, b.Name) })
	_, err := writeFile(dir, ManifestFile, func(w io.Writer) error {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
	return err
}
