package bundle

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"aimeter/bundle/internal/parquet"
	"aimeter/loadgen"
	"aimeter/sysinfo"
)

// Names of the raw files of a bundle.
const (
	SettingsFile = "settings.json"     // the requested and effective settings, the passes, the counters
	RunFile      = "run.json"          // what the run was beyond its settings: name, process, time zone, system
	RecordsFile  = parquet.RecordsFile // one row per issued sample (format version 2)
	// RecordsCSVFile is the record file of a format version 1 bundle,
	// which Read still reads and WriteWith writes on request.
	RecordsCSVFile = parquet.RecordsCSVFile
	StagesFile     = parquet.StagesFile         // the SUT-side stage times (GB/T 45087 Table 16), when the SUT reported any (format version 3)
	StagesCSVFile  = "stages.csv"               // StagesFile in bundles of format versions 1 and 2
	AccuracyFile   = "mlperf_log_accuracy.json" // LoadGen's accuracy log (raw: the responses)
	GBTTestFile    = "gbt_test.json"            // a GB/T test's description (package gbt's part)
	// ForeignDir holds the run of a GB/T mixed test's foreign jobs (mode 5,
	// IN-50), laid out as a bundle of its own without a manifest: the
	// outer manifest lists its files.
	ForeignDir = "foreign"
)

// Names of the derived files of a bundle.
const (
	SummaryFile = "mlperf_log_summary.txt"
	DetailFile  = "mlperf_log_detail.txt"
	TraceFile   = "mlperf_log_trace.json"
	ReportFile  = "report.html"
	// GBTResultFile and GBTLogFile are a GB/T test's results (7.3) and
	// inference log (7.3 f)).
	GBTResultFile = "gbt_result.json"
	GBTLogFile    = "gbt_inference.log"
	// ResultFile is the machine-readable result (package derived).
	ResultFile = "result.json"
)

// Bundle is one run: everything it recorded, from which every report is
// derived. A Bundle made from a live loadgen.Result and one read back from
// its directory give the same derived files, byte for byte.
type Bundle struct {
	// Result is the run: settings, passes, events, accuracy log, counters,
	// records and the reported summary. Read rebuilds the summary from the
	// records.
	Result *loadgen.Result
	// Stages are the SUT-side stage times, one per record in the order of
	// Result.Records, joined to the records by sequence id (NoStages for a
	// record without). Nil means: take them from Result.Stages when
	// Result.HasStages, as for a live run.
	Stages []loadgen.StageTimes

	// Version is the aimeter version that ran the test; the detail log's
	// loadgen_version is "aimeter <Version>".
	Version string
	// Name labels the run in report.html; empty means "<SUT> <scenario>".
	Name string
	// PID is the process that ran the test, written in the metadata of the
	// detail log; 0 means this process.
	PID int
	// Location is the time zone of the run's wall-clock times (the detail
	// log's test_datetime); nil means time.Local. Stored as its name and
	// offset at the start of the run.
	Location *time.Location
	// System describes the machine the run was on.
	System sysinfo.System
	// AccuracyCheck, if set, is the outcome of scoring the accuracy log
	// against the data set's ground truth, which the bundle does not hold.
	AccuracyCheck *AccuracyCheck
	// HostLoad, if set, is how busy the machine was during the run: CPU
	// time used by other processes and stolen by the hypervisor, from
	// /proc (sysinfo.LoadMeter around loadgen.Run). Nil where unmeasured.
	HostLoad *sysinfo.Load
	// Trace also derives mlperf_log_trace.json.
	Trace bool
	// NoReport leaves report.html out of the derived files.
	NoReport bool
	// Nodes names the nodes of a run dispatched over several servers
	// (sut/dispatch), whose records say which node served each sample;
	// stored in run.json as "nodes". Nil for any other run, and for
	// bundles written before it was kept.
	Nodes []Node

	// ServerMetrics are the scrapes of the server's Prometheus endpoints
	// during a network run (server_metrics.jsonl, package scrape); nil
	// when none was scraped.
	ServerMetrics *ServerMetrics

	// Foreign is the run of a mixed test's foreign jobs (mode 5), stored
	// in foreign/; nil otherwise.
	Foreign *Bundle

	// Records, when not nil, wrote the records file while the run went
	// (loadgen.Options.Records was its Add): Write finishes that file
	// instead of writing the records again, when it holds exactly the
	// Result's records and Write's directory is the stream's; otherwise
	// Write discards it and writes the file as usual. Either way Write
	// leaves no stream running.
	Records *RecordStream

	// Manifest is the manifest Read verified or Write wrote; nil before.
	Manifest *Manifest
	dir      string // where Read or Write found or put the bundle

	// ps are the raw parts of packages above this one, set or decoded (see
	// Part), and the bytes of the raw files Read did not read itself,
	// until a part decodes them. A GB/T test's description (gbt.TestOf),
	// the run's telemetry (telemetry.LogOf), how it was asked for
	// (invocation.Of) and a training run (trainbundle.Of, a bundle without
	// a Result) are parts. Nil for none.
	ps *partSet
}

// AccuracyCheck is the outcome of scoring a run's accuracy log against the
// data set's ground truth (run.json's "accuracy_check"). The field names
// are those bundles have always stored.
type AccuracyCheck struct {
	Metric string  // what was measured, for example "top-1 accuracy (%)"
	Value  float64 // the measured value
	Target float64 // the value the run had to reach
	Pass   bool    // whether Value met Target
}

// Node is one node of a run dispatched over several servers (sut/dispatch):
// its number, as in loadgen.Record.Node, its name and its URL.
type Node struct {
	// Number is the node's number, from 1.
	Number int `json:"number"`
	// Name is the node's name (the server's own, or its endpoint's).
	Name string `json:"name"`
	// URL is where the node was reached; empty when unknown.
	URL string `json:"url,omitempty"`
}

// A Derivation makes one derived file of a bundle from its raw parts.
// Package derived holds the list of every derived file; Write and
// Regenerate take it, so that this package computes and renders nothing.
type Derivation struct {
	// Name is the file's name in the bundle, e.g. "mlperf_log_summary.txt".
	Name string
	// For reports whether b has the file; nil means every bundle has it.
	// For a mixed test's foreign run it is asked of the foreign Bundle.
	For func(b *Bundle) bool
	// Write writes the file of b.
	Write func(w io.Writer, b *Bundle) error
}

// runMeta is run.json.
type runMeta struct {
	Name string `json:"name,omitempty"`
	PID  int    `json:"pid"`
	// GetSUTNameDurationNs is LoadGen's get_sut_name_duration_ns.
	GetSUTNameDurationNs int64          `json:"get_sut_name_duration_ns"`
	Zone                 zone           `json:"zone"`
	System               sysinfo.System `json:"system"`
	AccuracyCheck        *AccuracyCheck `json:"accuracy_check,omitempty"`
	HostLoad             *sysinfo.Load  `json:"host_load,omitempty"`
	Trace                bool           `json:"trace,omitempty"`
	NoReport             bool           `json:"no_report,omitempty"`
	Nodes                []Node         `json:"nodes,omitempty"`
}

// zone is a time zone as it was at the start of a run.
type zone struct {
	Name          string `json:"name"`
	OffsetSeconds int    `json:"offset_s"`
}

// TimeZone is the time zone of the run's wall-clock times: Location, or
// time.Local when it is nil.
func (b *Bundle) TimeZone() *time.Location {
	if b.Location == nil {
		return time.Local
	}
	return b.Location
}

// ProcessID is the process that ran the test: PID, or this process when it
// is 0.
func (b *Bundle) ProcessID() int {
	if b.PID == 0 {
		return os.Getpid()
	}
	return b.PID
}

// Write writes b into dir, creating it if needed: first the raw files, then
// the derived files of derivations (derived.Files is the list of them all;
// nil writes the raw files only), then manifest.json with the size and
// SHA-256 of each.
// Each file is written whole or not at all (a temporary file renamed into
// place), with mode 0644. A failing file does not stop the others; the error
// joins one error per failed file, each naming its file, and the manifest is
// written only when every file was. Before writing, the files of an earlier
// run in dir that this bundle does not write (see removeStale) are removed.
// A Bundle without a Result but with raw parts (a training run's,
// trainbundle.Set) is written as those parts alone.
func Write(dir string, b *Bundle, derivations []Derivation) error {
	return WriteWith(dir, b, derivations, WriteOptions{})
}

// WriteOptions controls WriteWith.
type WriteOptions struct {
	// FormatVersion is the layout to write: 0 or FormatVersion for the
	// current one; 2 for a version 2 bundle, whose stage times, sample
	// data and token times are stages.csv, samples.csv and tokens.csv; 1
	// for a version 1 bundle, whose records are records.csv too (for tools
	// that read only those). Training bundles are the same in all.
	FormatVersion int
}

// WriteWith is Write with options.
func WriteWith(dir string, b *Bundle, derivations []Derivation, opts WriteOptions) error {
	version := opts.FormatVersion
	if version == 0 {
		version = FormatVersion
	}
	if version < minFormatVersion || version > FormatVersion {
		return fmt.Errorf("bundle: cannot write layout version %d (this aimeter writes %d to %d)", version, minFormatVersion, FormatVersion)
	}
	if b != nil && hasPart(b, TrainingRunFile) && b.Result != nil {
		return errors.New("bundle: Write of a bundle with both a Result and a Training")
	}
	if b != nil && b.Result == nil && b.hasParts() {
		return writePartsOnly(dir, b, derivations)
	}
	if b == nil || b.Result == nil {
		return errors.New("bundle: Write of a bundle without a Result")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if b.PID == 0 {
		b.PID = os.Getpid()
	}
	if b.Location == nil {
		b.Location = time.Local
	}
	if b.Foreign != nil {
		if b.Foreign.Result == nil {
			return errors.New("bundle: Write of a foreign run without a Result")
		}
		if b.Foreign.PID == 0 {
			b.Foreign.PID = b.PID
		}
		if b.Foreign.Location == nil {
			b.Foreign.Location = b.Location
		}
	}
	// Records written while the run went are finished, not written again,
	// when they are this Result's, in this directory and this layout.
	streamed := false
	if s := b.Records; s != nil {
		streamed = version >= 2 && s.Count() == b.Result.RecordCount() && sameDir(s.dir, dir)
		defer s.Discard() // no-op once finished; else its file goes
	}
	parts, err := b.rawParts("", version, streamed)
	if err != nil {
		return err
	}
	parts = append(parts, b.derivedParts("", derivations)...)
	if f := b.Foreign; f != nil {
		fparts, err := f.rawParts(ForeignDir+"/", version, false)
		if err != nil {
			return err
		}
		parts = append(parts, fparts...)
		parts = append(parts, f.derivedParts(ForeignDir+"/", derivations)...)
	}
	var finished map[string]func() (ManifestEntry, error)
	if streamed {
		finished = map[string]func() (ManifestEntry, error){RecordsFile: b.Records.finish}
		// The files written beside the records are listed as they are.
		for i := range parts {
			if e, ok := b.Records.beside[parts[i].name]; ok && version >= 3 {
				parts[i].write = nil
				finished[e.Name] = func() (ManifestEntry, error) { return e, nil }
			}
		}
	}
	if err := removeStale(dir, parts); err != nil {
		return err
	}
	entries, err := writeParts(dir, parts, finished)
	if err != nil {
		return err
	}
	m := &Manifest{Format: FormatName, FormatVersion: version, Generator: "aimeter " + b.Version, Files: entries}
	if err := writeManifest(dir, m); err != nil {
		return err
	}
	b.Manifest, b.dir = m, dir
	return nil
}

// bundleFiles are the names of every file a bundle can hold, at its top
// level and (with ForeignDir/ before them) in its foreign run.
func bundleFiles() []string {
	return []string{SettingsFile, RunFile, EventsFile, RecordsFile, RecordsCSVFile, AccuracyFile, StagesFile, StagesCSVFile, SamplesFile, SamplesCSVFile,
		ErrorsFile, TokensFile, TokensCSVFile,
		ServerMetricsFile,
		GBTTestFile, InvocationFile, ResultFile, SummaryFile, DetailFile, TraceFile, ReportFile, GBTResultFile, GBTLogFile,
		TrainingRunFile, TrainingEventsFile, TrainingStdoutFile, TrainingStderrFile, TrainingResultFile, TrainingLogFile, ManifestFile,
		TelemetryFile}
}

// removeStale removes from dir the manifest and every file a bundle can
// hold that parts does not write, left there by an earlier run, so that the
// directory ends up holding the new bundle alone: a stale gbt_result.json,
// trace or foreign run would otherwise sit beside it, unlisted in its
// manifest. The manifest goes first, so that a Write that fails part way
// never leaves an old manifest describing a mix of runs. ForeignDir itself
// is removed when it is left empty; files that no bundle holds are kept.
func removeStale(dir string, parts []part) error {
	keep := make(map[string]bool, len(parts))
	for _, p := range parts {
		keep[p.name] = true
	}
	var errs []error
	for _, prefix := range []string{"", ForeignDir + "/"} {
		for _, name := range bundleFiles() {
			name = prefix + name
			if keep[name] {
				continue
			}
			err := os.Remove(filepath.Join(dir, filepath.FromSlash(name)))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing %s of an earlier run: %w", name, err))
			}
		}
	}
	// Trials' output files are numbered: whatever an earlier run left.
	stale, _ := filepath.Glob(filepath.Join(dir, "training_trial*_std*.log"))
	for _, p := range stale {
		if keep[filepath.Base(p)] {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s of an earlier run: %w", filepath.Base(p), err))
		}
	}
	foreign := filepath.Join(dir, ForeignDir)
	if entries, err := os.ReadDir(foreign); err == nil && len(entries) == 0 {
		if err := os.Remove(foreign); err != nil {
			errs = append(errs, fmt.Errorf("removing the empty %s of an earlier run: %w", ForeignDir, err))
		}
	}
	return errors.Join(errs...)
}

// part is one file of a bundle and how to write it.
type part struct {
	name  string
	role  Role
	write func(io.Writer) error
}

// writeParts writes parts concurrently, two at a time per core at most, and
// returns their manifest entries in the order of parts. A part without
// write was written while the run went: its function in finished finishes
// the file and returns its entry.
func writeParts(dir string, parts []part, finished map[string]func() (ManifestEntry, error)) ([]ManifestEntry, error) {
	entries := make([]ManifestEntry, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() {
			if p.write == nil {
				finish := finished[p.name]
				if finish == nil {
					errs[i] = fmt.Errorf("bundle: %s has nothing to write it", p.name)
					return
				}
				entries[i], errs[i] = finish()
				return
			}
			wf, err := writeFile(dir, p.name, p.write)
			if err != nil {
				errs[i] = err
				return
			}
			entries[i] = ManifestEntry{Name: p.name, Role: p.role, Bytes: wf.Bytes, SHA256: wf.SHA256}
		})
	}
	wg.Wait()
	return entries, errors.Join(errs...)
}

// rawParts lists the raw files of b in layout version (1 to 3); with
// streamed, the records file was written while the run went (its part has
// no write: writeParts finishes it).
func (b *Bundle) rawParts(prefix string, version int, streamed bool) ([]part, error) {
	r := b.Result
	records := part{prefix + RecordsFile, Raw, func(w io.Writer) error { return WriteResultRecordsParquet(w, r, RecordWriterOptions{}) }}
	if version == 1 {
		records = part{prefix + RecordsCSVFile, Raw, func(w io.Writer) error { return WriteResultRecords(w, r) }}
	}
	parts := []part{
		{prefix + SettingsFile, Raw, func(w io.Writer) error { return WriteRunInfo(w, RunInfoFromResult(r, b.Version)) }},
		{prefix + RunFile, Raw, func(w io.Writer) error { return b.writeMeta(w) }},
		{prefix + EventsFile, Raw, func(w io.Writer) error { return WriteEvents(w, r.Events) }},
		records,
		{prefix + AccuracyFile, Raw, func(w io.Writer) error { return WriteAccuracyLog(w, r.Accuracy) }},
	}
	if streamed {
		parts[3].write = nil
	}
	csv := version < 3
	if b.hasStages() {
		if csv {
			parts = append(parts, part{prefix + StagesCSVFile, Raw, func(w io.Writer) error { return WriteStages(w, r.Records(), b.stageSeq()) }})
		} else {
			parts = append(parts, part{prefix + StagesFile, Raw, func(w io.Writer) error {
				return parquet.WriteStages(w, r.Records(), b.stageSeq(), DefaultRowGroupRows)
			}})
		}
	}
	if r.HasSampleData() {
		if csv {
			parts = append(parts, part{prefix + SamplesCSVFile, Raw, func(w io.Writer) error { return writeSamples(w, r.Records()) }})
		} else {
			parts = append(parts, part{prefix + SamplesFile, Raw, func(w io.Writer) error { return parquet.WriteSamples(w, r.Records(), DefaultRowGroupRows) }})
		}
	}
	if len(r.Errors) > 0 {
		parts = append(parts, part{prefix + ErrorsFile, Raw, func(w io.Writer) error { return writeErrors(w, r.Errors) }})
	}
	if r.HasTokenTimes() {
		if csv {
			parts = append(parts, part{prefix + TokensCSVFile, Raw, func(w io.Writer) error { return writeTokens(w, r.TokenTimes()) }})
		} else {
			parts = append(parts, part{prefix + TokensFile, Raw, func(w io.Writer) error { return parquet.WriteTokens(w, r.TokenTimes(), DefaultRowGroupRows) }})
		}
	}
	// The parts of packages above, where they have always been listed.
	first, rest, err := b.extraParts(prefix)
	if err != nil {
		return nil, err
	}
	parts = append(parts, first...)
	if b.ServerMetrics != nil {
		parts = append(parts, part{prefix + ServerMetricsFile, Raw, func(w io.Writer) error { return WriteServerMetrics(w, b.ServerMetrics) }})
	}
	return append(parts, rest...), nil
}

func (b *Bundle) hasStages() bool { return b.Stages != nil || b.Result.HasStages() }

// stageSeq yields the stage times in the order of the records.
func (b *Bundle) stageSeq() func(func(loadgen.StageTimes) bool) {
	if b.Stages == nil {
		return b.Result.Stages()
	}
	return slices.Values(b.Stages)
}

func (b *Bundle) writeMeta(w io.Writer) error {
	name, off := time.Unix(0, 0).In(b.TimeZone()).Zone()
	if !b.Result.StartTime.IsZero() {
		name, off = b.Result.StartTime.In(b.TimeZone()).Zone()
	}
	m := runMeta{Name: b.Name, PID: b.ProcessID(), GetSUTNameDurationNs: b.Result.GetSUTNameDurationNs, Zone: zone{name, off}, System: b.System,
		AccuracyCheck: b.AccuracyCheck, HostLoad: b.HostLoad, Trace: b.Trace, NoReport: b.NoReport, Nodes: b.Nodes}
	enc, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(enc, '\n'))
	return err
}

// derivedParts lists the files of derivations that b has, named with
// prefix before them.
func (b *Bundle) derivedParts(prefix string, derivations []Derivation) []part {
	var parts []part
	for _, d := range derivations {
		if d.For != nil && !d.For(b) {
			continue
		}
		parts = append(parts, part{prefix + d.Name, Derived, func(w io.Writer) error { return d.Write(w, b) }})
	}
	return parts
}

// StageTimes returns the SUT-side stage times of b's records, one per
// record in their order (NoStages for a record without), or nil when the
// run reported none.
func (b *Bundle) StageTimes() []loadgen.StageTimes {
	if !b.hasStages() {
		return nil
	}
	return slices.Collect(b.stageSeq())
}

// Regenerate writes the derived files of derivations that b has into dir
// again, from the raw parts alone. When dir holds b itself (Read from it), the manifest is
// updated for any derived file whose bytes changed (a newer aimeter may
// format differently); the raw files are never touched.
func Regenerate(dir string, b *Bundle, derivations []Derivation) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	parts := b.derivedParts("", derivations)
	if b.Foreign != nil {
		parts = append(parts, b.Foreign.derivedParts(ForeignDir+"/", derivations)...)
	}
	entries, err := writeParts(dir, parts, nil)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.name
	}
	if b.Manifest == nil || b.dir == "" || !sameDir(b.dir, dir) {
		return names, nil
	}
	changed := false
	for _, e := range entries {
		i := slices.IndexFunc(b.Manifest.Files, func(old ManifestEntry) bool { return old.Name == e.Name })
		switch {
		case i < 0:
			b.Manifest.Files = append(b.Manifest.Files, e)
			changed = true
		case b.Manifest.Files[i] != e:
			b.Manifest.Files[i] = e
			changed = true
		}
	}
	if changed {
		if err := writeManifest(dir, b.Manifest); err != nil {
			return names, err
		}
	}
	return names, nil
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// ReadOptions controls ReadWith.
type ReadOptions struct {
	// SkipVerify reads the files without checking them against the
	// manifest's digests (for example to study a bundle edited on purpose).
	// The zero value verifies.
	SkipVerify bool
	// Parts are decoded as the bundle is read (in its run and its foreign
	// run): a malformed one is an error naming its file. The others are
	// decoded when first asked for. derived.Parts lists every known part.
	Parts []Part
}

// Read reads the bundle in dir, checking every file against the manifest's
// size and SHA-256 first: a file that changed gives a *DigestError naming
// it. Settings out of range and impossible records are refused next (see
// the package documentation). The Result it returns has its records
// attached and its summary recomputed from them, so that the derived files
// are exactly those the run wrote; a run interrupted before it issued
// anything reads back with an empty summary.
func Read(dir string) (*Bundle, error) { return ReadWith(dir, ReadOptions{}) }

// readVerified reads dir's manifest and, unless opts.SkipVerify, checks
// every file it lists against its digest: the start of ReadWith and
// ReadHead.
func readVerified(dir string, opts ReadOptions) (*Manifest, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if !opts.SkipVerify {
		if err := m.Verify(dir); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ReadWith is Read with options.
func ReadWith(dir string, opts ReadOptions) (*Bundle, error) {
	m, err := readVerified(dir, opts)
	if err != nil {
		return nil, err
	}
	if _, ok := m.Entry(TrainingRunFile); ok {
		// A training bundle: its raw files are all a part's.
		b := &Bundle{}
		if err := b.keepRaw(dir, m, "", nil); err != nil {
			return nil, err
		}
		b.Manifest, b.dir = m, dir
		return b, checkParts(dir, "", b, opts.Parts)
	}
	b, err := readRun(dir, m, "")
	if err != nil {
		return nil, err
	}
	b.Manifest, b.dir = m, dir
	if _, ok := m.Entry(ForeignDir + "/" + SettingsFile); ok {
		if b.Foreign, err = readRun(dir, m, ForeignDir+"/"); err != nil {
			return nil, err
		}
	}
	if err := checkParts(dir, "", b, opts.Parts); err != nil {
		return nil, err
	}
	if b.Foreign != nil {
		if err := checkParts(dir, ForeignDir+"/", b.Foreign, opts.Parts); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// checkParts decodes parts of b, read from dir (its files under prefix),
// and returns the first error, naming the file's path.
func checkParts(dir, prefix string, b *Bundle, parts []Part) error {
	for _, p := range parts {
		if err := p.Check(b); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, filepath.FromSlash(prefix)), err)
		}
	}
	return nil
}

// ownFiles are the raw files of a run that this package reads itself; Read
// keeps the bytes of any other for the parts of packages above it.
func ownFiles() []string {
	return []string{SettingsFile, RunFile, EventsFile, RecordsFile, RecordsCSVFile, AccuracyFile, StagesFile, StagesCSVFile,
		SamplesFile, SamplesCSVFile, ErrorsFile, TokensFile, TokensCSVFile, ServerMetricsFile}
}

// readRun reads the run whose files m lists under prefix ("" for the
// bundle's own run, "foreign/" for a mixed test's foreign jobs): its head
// (readHead), then its records and the per-sample files beside them, and
// summarizes its reported pass.
func readRun(dir string, m *Manifest, prefix string) (*Bundle, error) {
	recordsFile := RecordsFile
	if m.FormatVersion == 1 {
		recordsFile = RecordsCSVFile
	}
	// Stage times, sample data and token times are CSV before version 3.
	csv := m.FormatVersion < 3
	stagesFile, samplesFile, tokensFile := StagesFile, SamplesFile, TokensFile
	if csv {
		stagesFile, samplesFile, tokensFile = StagesCSVFile, SamplesCSVFile, TokensCSVFile
	}
	b, info, err := readHead(dir, m, prefix, recordsFile)
	if err != nil {
		return nil, err
	}
	res := b.Result
	has := func(name string) bool { _, ok := m.Entry(prefix + name); return ok }
	read := func(name string, f func(io.Reader) error) error { return readFile(dir, prefix+name, f) }
	var recs *loadgen.RecordTable
	if err := read(recordsFile, func(r io.Reader) (err error) {
		if recordsFile == RecordsCSVFile {
			var rows []loadgen.Record
			if rows, err = ReadRecords(r); err == nil {
				recs = loadgen.NewRecordTable(len(rows))
				recs.Append(rows...)
			}
		} else {
			recs, err = parquet.ReadRecordTable(r)
		}
		if err != nil {
			return err
		}
		return checkRecords(recs, &info, recordsFile)
	}); err != nil {
		return nil, err
	}
	if has(samplesFile) {
		if err := read(samplesFile, func(r io.Reader) error {
			if csv {
				return readSamples(r, recs, len(res.Errors))
			}
			return parquet.ReadSamples(r, recs, len(res.Errors))
		}); err != nil {
			return nil, err
		}
	}
	res.AttachTable(recs)
	if has(tokensFile) {
		if err := read(tokensFile, func(r io.Reader) error {
			var traces []loadgen.TokenTrace
			var err error
			if csv {
				traces, err = readTokens(r)
			} else {
				traces, err = parquet.ReadTokens(r)
			}
			res.AttachTokenTimes(traces)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if has(stagesFile) {
		if err := read(stagesFile, func(r io.Reader) error {
			var seqs []uint64
			var stages []loadgen.StageTimes
			var err error
			if csv {
				seqs, stages, err = ReadStages(r)
			} else {
				seqs, stages, err = parquet.ReadStages(r)
			}
			if err != nil {
				return err
			}
			firstRow := 1 // stages.parquet's rows count from 1
			if csv {
				firstRow = 2 // the header is line 1
			}
			b.Stages, err = joinStages(recs, seqs, stages, firstRow)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if idx := slices.IndexFunc(info.Passes, func(p loadgen.PassInfo) bool { return p.Reported }); idx >= 0 {
		var err error
		res.Summary, err = res.SummarizeStoredPass(idx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, prefix), err)
		}
	}
	return b, nil
}

// readHead reads the head of the run whose files m lists under prefix:
// what the run's size does not change (settings, run metadata, events,
// the error table, the accuracy log, server metrics, and the raw bytes of
// the files of packages above). It checks that m lists every file a run
// always holds, recordsFile among them, but reads no per-sample file: the
// Result it returns has no records. Read and ReadHead share it.
func readHead(dir string, m *Manifest, prefix, recordsFile string) (*Bundle, RunInfo, error) {
	var info RunInfo
	for _, name := range []string{SettingsFile, RunFile, EventsFile, recordsFile, AccuracyFile} {
		if _, ok := m.Entry(prefix + name); !ok {
			return nil, info, fmt.Errorf("%s: %s does not list %s, which a version %d bundle always holds (written by %s)",
				dir, ManifestFile, prefix+name, m.FormatVersion, orUnknown(m.Generator))
		}
	}
	has := func(name string) bool { _, ok := m.Entry(prefix + name); return ok }
	read := func(name string, f func(io.Reader) error) error { return readFile(dir, prefix+name, f) }
	b := &Bundle{}
	if err := read(SettingsFile, func(r io.Reader) (err error) {
		if info, err = ReadRunInfo(r); err != nil {
			return err
		}
		return checkRunInfo(&info)
	}); err != nil {
		return nil, info, err
	}
	var meta runMeta
	if err := read(RunFile, func(r io.Reader) error {
		dec := json.NewDecoder(r)
		dec.DisallowUnknownFields()
		return dec.Decode(&meta)
	}); err != nil {
		return nil, info, err
	}
	res := &loadgen.Result{
		SUTName: info.SUTName, GetSUTNameDurationNs: meta.GetSUTNameDurationNs, QSLName: info.QSLName,
		QSLTotalCount: info.QSLTotalCount, QSLPerformanceCount: info.QSLPerformanceCount,
		Requested: info.Requested, Effective: info.Effective, StartTime: info.StartTime,
		Passes: info.Passes, Interrupted: info.Interrupted,
		UnknownCompletions: info.UnknownCompletions, DuplicateCompletions: info.DuplicateCompletions,
		FailedSamples: info.FailedSamples, LostSamples: info.LostSamples, LateCompletions: info.LateCompletions,
	}
	b.Result = res
	b.Version = info.Version
	b.Name, b.PID, b.System, b.AccuracyCheck = meta.Name, meta.PID, meta.System, meta.AccuracyCheck
	b.Trace, b.NoReport = meta.Trace, meta.NoReport
	b.Nodes = meta.Nodes
	b.HostLoad = meta.HostLoad
	b.Location = time.FixedZone(meta.Zone.Name, meta.Zone.OffsetSeconds)
	if err := read(EventsFile, func(r io.Reader) (err error) {
		res.Events, err = ReadEvents(r)
		return err
	}); err != nil {
		return nil, info, err
	}
	if has(ErrorsFile) {
		if err := read(ErrorsFile, func(r io.Reader) (err error) {
			res.Errors, err = readErrors(r)
			return err
		}); err != nil {
			return nil, info, err
		}
	}
	if err := read(AccuracyFile, func(r io.Reader) (err error) {
		res.Accuracy, err = ReadAccuracyLog(r)
		return err
	}); err != nil {
		return nil, info, err
	}
	if has(ServerMetricsFile) {
		if err := read(ServerMetricsFile, func(r io.Reader) (err error) {
			b.ServerMetrics, err = ReadServerMetrics(r)
			return err
		}); err != nil {
			return nil, info, err
		}
	}
	if err := b.keepRaw(dir, m, prefix, ownFiles()); err != nil {
		return nil, info, err
	}
	return b, info, nil
}

// joinStages orders stage times like the records, matching them by
// sequence id. A record without a row gets NoStages; a row whose sequence
// id is no record's, or a sequence id given twice, is an error naming the
// row (the first of seqs being row firstRow).
func joinStages(recs *loadgen.RecordTable, seqs []uint64, stages []loadgen.StageTimes, firstRow int) ([]loadgen.StageTimes, error) {
	find := recs.Finder()
	out := make([]loadgen.StageTimes, recs.Len())
	for i := range out {
		out[i] = loadgen.NoStages
	}
	seen := make([]bool, recs.Len())
	for k, seq := range seqs {
		i, ok := find(seq)
		if !ok {
			return nil, fmt.Errorf("row %d: seq_id %d is not in the records", k+firstRow, seq)
		}
		if seen[i] {
			return nil, fmt.Errorf("row %d: seq_id %d appears twice", k+firstRow, seq)
		}
		seen[i] = true
		out[i] = stages[k]
	}
	return out, nil
}

func readFile(dir, name string, read func(io.Reader) error) error {
	p := filepath.Join(dir, filepath.FromSlash(name))
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: missing from the bundle", p)
		}
		return err
	}
	defer f.Close()
	r := sizedReader{Reader: bufio.NewReaderSize(f, 1<<20), size: -1}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		r.size = st.Size()
	}
	if err := read(r); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// sizedReader is a reader of a file that knows the file's size (-1 when
// unknown), so that a reader of the whole file can allocate it once.
type sizedReader struct {
	*bufio.Reader
	size int64
}

// Size is the size of the file, or -1.
func (r sizedReader) Size() int64 { return r.size }
