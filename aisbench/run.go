// Package aisbench runs the workload packages built for the Ais-Benchmark
// Stubs (the public ais-bench_workload code of the Ascend tools
// repositories) unchanged under aimeter: it runs the package's
// code/benchmark.sh in a copy of the package, with aimeter's own
// ais_utils.py where the package looks for it, reads every set_result the
// workload makes, and maps the results onto the GB/T 45087 training test's
// figures (clause 6) with the source of each (package train's
// WorkloadReport). docs/ais-bench.md walks a lab through it.
package aisbench

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// AisUtils is aimeter's ais_utils.py: the Python module and command line
// that the packages call (set_result, get_datatime, calc_throughput_rate,
// calc_lantency), which appends each result to the file named by
// ResultsEnv.
//
//go:embed ais_utils.py
var AisUtils []byte

// ResultsEnv is the environment variable naming the results file that
// ais_utils.py appends JSON lines to.
const ResultsEnv = "AIMETER_AIS_RESULTS"

// EntryScript is the script the stubs run, relative to the package.
const EntryScript = "code/benchmark.sh"

// Places where ais_utils.py is put in the copy, relative to the package:
// stubs 1.0's code/ and stubs 2.0's dependencies/logging/.
var Places = []string{"code/ais_utils.py", "dependencies/logging/ais_utils.py"}

// ExitMeaning is what benchmark.sh's exit status says (the return codes
// of the training scripts: 1 init, 2 run_train, 3 run_eval, 4 get_result,
// 5 the run mode, stubs 2.0).
func ExitMeaning(code int) string {
	switch code {
	case 0:
		return "ok"
	case 1:
		return "init failed"
	case 2:
		return "run_train failed"
	case 3:
		return "run_eval failed"
	case 4:
		return "get_result failed"
	case 5:
		return "the run mode failed"
	}
	return "an exit status the stubs do not define"
}

// Options say how to run a package.
type Options struct {
	// Dir is the workload package: the folder holding code/benchmark.sh.
	// Required. It is not modified: the run happens in a copy.
	Dir string
	// Timeout ends a package that runs longer: SIGTERM to its process
	// group, SIGKILL after Grace. 0: no limit.
	Timeout time.Duration
	// Grace is the wait between SIGTERM and SIGKILL; 0 is 10 s.
	Grace time.Duration
	// WorkDir is where the copy is made; "" is the system's temporary
	// directory. The copy is removed when Execute returns.
	WorkDir string
	// Env is added to the package's environment (KEY=VALUE).
	Env []string
	// Stdout and Stderr, if set, are shown the package's output as it
	// comes; Output keeps the first CaptureLimit bytes of each anyway.
	Stdout, Stderr io.Writer
	// CaptureLimit bounds each captured stream and the package's log
	// files together; 0 is 16 MiB.
	CaptureLimit int
	// Shell runs the entry script; "" is bash.
	Shell string
}

// Phase is one of benchmark.sh's phases, timed by aimeter from the
// banners the package's log_util.sh prints ("… init start …", "… train end
// …") as aimeter reads them, on aimeter's clock.
type Phase struct {
	// Name is init, run_train, run_eval or get_result.
	Name  string    `json:"name"`
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// Failed says the package logged the phase as failed.
	Failed bool `json:"failed,omitempty"`
}

// Run is an ais-bench package's run as the bundle keeps it (raw, in
// training_run.json): how it ended, its phases and every result it set.
type Run struct {
	// Package is the package folder's base name.
	Package string `json:"package"`
	// Layout is "stubs 2.0" when the package has dependencies/, else
	// "stubs 1.0".
	Layout string `json:"layout"`
	// Start and End bound the run of benchmark.sh.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// ExitCode is benchmark.sh's status (-1 when killed by a signal),
	// Exit says how it ended in words, TimedOut that Options.Timeout
	// ended it.
	ExitCode int    `json:"exit_code"`
	Exit     string `json:"exit"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// Phases are the phases seen, in order.
	Phases []Phase `json:"phases,omitempty"`
	// Records are the results set, in order.
	Records []Record `json:"records,omitempty"`
	// Malformed counts the results file's bad lines; FirstMalformed
	// quotes the first five.
	Malformed      int         `json:"malformed,omitempty"`
	FirstMalformed []Malformed `json:"first_malformed,omitempty"`
	// RankFiles are the per-rank result files the workload wrote.
	RankFiles []RankFile `json:"rank_files,omitempty"`
	// Files are the package's log and result files kept in the bundle
	// (names relative to the package), and Skipped those left out, each
	// with why.
	Files   []string `json:"files,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	// Zone is the time zone the workload's time stamps are read in, as
	// an offset east of UTC in seconds.
	ZoneOffsetSeconds int `json:"zone_offset_s"`
}

// Output is what Execute captured beside the Run: the streams and the
// package's files, by name relative to the package.
type Output struct {
	Stdout, Stderr []byte
	Files          map[string][]byte
}

// ErrNoEntryScript is wrapped by Execute's error for a folder without
// code/benchmark.sh.
var ErrNoEntryScript = errors.New("not an ais-bench workload package: no " + EntryScript)

// Check says whether dir is a workload package: a folder holding
// code/benchmark.sh.
func Check(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("ais-bench package %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("ais-bench package %s: not a folder", dir)
	}
	if fi, err := os.Stat(filepath.Join(dir, EntryScript)); err != nil || fi.IsDir() {
		return fmt.Errorf("%s: %w", dir, ErrNoEntryScript)
	}
	return nil
}

// maxResults bounds the bytes of the results file read.
const maxResults = 64 << 20

// copyLimit is the size above which a package's file is linked, not
// copied, into the run's copy (data sets and checkpoints kept inside).
const copyLimit = 8 << 20

// Execute runs the package's code/benchmark.sh once, in a copy of the
// package with ais_utils.py placed at Places, and returns the run. Its
// error is non-nil only when nothing ran (no package, no shell, the copy
// failed); a package that fails, hangs or sets nothing is a Run that says
// so.
func Execute(ctx context.Context, o Options) (*Run, *Output, error) {
	if err := Check(o.Dir); err != nil {
		return nil, nil, err
	}
	limit := o.CaptureLimit
	if limit <= 0 {
		limit = 16 << 20
	}
	shell := o.Shell
	if shell == "" {
		shell = "bash"
	}
	shellPath, err := exec.LookPath(shell)
	if err != nil {
		return nil, nil, fmt.Errorf("running %s needs %s: %w", EntryScript, shell, err)
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp(o.WorkDir, "aimeter-ais-bench-")
	if err != nil {
		return nil, nil, fmt.Errorf("the package's copy: %w", err)
	}
	defer os.RemoveAll(tmp)
	pkg := filepath.Join(tmp, filepath.Base(abs))
	if err := copyTree(abs, pkg); err != nil {
		return nil, nil, fmt.Errorf("copying the package %s: %w", o.Dir, err)
	}
	run := &Run{Package: filepath.Base(abs), Layout: "stubs 1.0"}
	if fi, err := os.Stat(filepath.Join(pkg, "dependencies")); err == nil && fi.IsDir() {
		run.Layout = "stubs 2.0"
	}
	var pypath []string
	for _, p := range Places {
		dst := filepath.Join(pkg, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, nil, err
		}
		_ = os.Remove(dst) // a link to the package's own file, or its copy
		if err := os.WriteFile(dst, AisUtils, 0o644); err != nil {
			return nil, nil, fmt.Errorf("placing ais_utils.py: %w", err)
		}
		pypath = append(pypath, filepath.Dir(dst))
	}
	results := filepath.Join(tmp, "ais_results.jsonl")
	if err := os.WriteFile(results, nil, 0o644); err != nil {
		return nil, nil, err
	}

	before := snapshot(pkg)
	stdout, stderr := &capped{limit: limit}, &capped{limit: limit}
	var errW io.Writer = stderr
	if o.Stderr != nil {
		errW = io.MultiWriter(stderr, o.Stderr)
	}
	cmd := exec.Command(shellPath, filepath.Join(pkg, filepath.FromSlash(EntryScript)))
	cmd.Dir = filepath.Join(pkg, "code")
	env := append(os.Environ(), o.Env...)
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pypath = append(pypath, old)
	}
	cmd.Env = append(env, ResultsEnv+"="+results, "PYTHONPATH="+strings.Join(pypath, string(os.PathListSeparator)))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	grace := o.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	// A child left holding the output open does not hold the run.
	cmd.WaitDelay = grace
	cmd.Stderr = errW
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	run.Start = time.Now()
	_, off := run.Start.Zone()
	run.ZoneOffsetSeconds = off
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", EntryScript, err)
	}
	var phases phaseLog
	read := make(chan struct{})
	go func() {
		defer close(read)
		br := bufio.NewReaderSize(pr, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				at := time.Now()
				stdout.Write(line)
				if o.Stdout != nil {
					o.Stdout.Write(line)
				}
				phases.see(line, at)
			}
			if err != nil {
				_, _ = io.Copy(io.Discard, pr)
				return
			}
		}
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait(); pw.Close() }()
	var timeout <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var werr error
	stopped := ""
	select {
	case werr = <-waited:
	case <-timeout:
		stopped = fmt.Sprintf("timed out after %v (the run's timeout)", o.Timeout)
		run.TimedOut = true
		werr = stopGroup(cmd, waited, grace)
	case <-ctx.Done():
		stopped = "interrupted: " + context.Cause(ctx).Error()
		werr = stopGroup(cmd, waited, grace)
	}
	run.End = time.Now()
	<-read
	run.ExitCode = cmd.ProcessState.ExitCode()
	switch {
	case stopped != "":
		run.Exit = stopped
	case werr == nil:
		run.Exit = "exited with status 0 (ok)"
	default:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			run.Exit = "killed by " + ws.Signal().String()
		} else {
			run.Exit = fmt.Sprintf("exited with status %d (%s)", run.ExitCode, ExitMeaning(run.ExitCode))
		}
	}
	run.Phases = phases.list()

	if f, err := os.Open(results); err == nil {
		run.Records, run.Malformed, run.FirstMalformed, _ = ReadRecords(io.LimitReader(f, maxResults))
		if fi, err := f.Stat(); err == nil && fi.Size() > maxResults {
			run.Skipped = append(run.Skipped, fmt.Sprintf("the results past the first %d bytes of %d (set_result called too often)", int64(maxResults), fi.Size()))
		}
		f.Close()
	}
	run.RankFiles = readRankFiles(pkg)
	out := &Output{Stdout: stdout.bytes(), Stderr: stderr.bytes(), Files: map[string][]byte{}}
	files, skipped := collectFiles(pkg, before, limit, out.Files)
	run.Files, run.Skipped = files, append(run.Skipped, skipped...)
	return run, out, nil
}

// stopGroup ends the package's process group: SIGTERM, then SIGKILL after
// grace; it returns the Wait error.
func stopGroup(cmd *exec.Cmd, waited <-chan error, grace time.Duration) error {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case err := <-waited:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // children left behind
		return err
	case <-time.After(grace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return <-waited
	}
}

// capped keeps the first limit bytes written.
type capped struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.limit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// banner matches log_util.sh's phase banners: "---- train start ----".
var banner = regexp.MustCompile(`-Ais-Bench-Stubs-.*-\s*(init|train|eval|get_result)\s+(start|end)\s*-`)

// failedLine matches benchmark.sh's "run_eval failed ret:1".
var failedLine = regexp.MustCompile(`-Ais-Bench-Stubs-.*\b(init|run_train|run_eval|get_result) failed`)

// phaseLog gathers the phases from the lines of stdout.
type phaseLog struct {
	phases []Phase
}

func phaseName(s string) string {
	switch s {
	case "train":
		return "run_train"
	case "eval":
		return "run_eval"
	}
	return s
}

func (p *phaseLog) find(name string) *Phase {
	for i := len(p.phases) - 1; i >= 0; i-- {
		if p.phases[i].Name == name {
			return &p.phases[i]
		}
	}
	p.phases = append(p.phases, Phase{Name: name})
	return &p.phases[len(p.phases)-1]
}

func (p *phaseLog) see(line []byte, at time.Time) {
	if m := banner.FindSubmatch(line); m != nil {
		name := phaseName(string(m[1]))
		if string(m[2]) == "start" {
			p.phases = append(p.phases, Phase{Name: name, Start: at})
		} else if ph := p.find(name); ph.End.IsZero() {
			ph.End = at
		}
		return
	}
	if m := failedLine.FindSubmatch(line); m != nil {
		p.find(string(m[1])).Failed = true
	}
}

func (p *phaseLog) list() []Phase { return p.phases }

// copyTree copies the package src into dst: folders and small files
// copied, files over copyLimit and symbolic links linked to the original.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case !info.Mode().IsRegular() || info.Size() > copyLimit:
			return os.Symlink(path, target)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm()|0o600)
	})
}

// snapshot records every regular file of the copy with its size and
// time, so that collectFiles can tell what the run wrote.
func snapshot(pkg string) map[string]fileStamp {
	out := map[string]fileStamp{}
	_ = filepath.WalkDir(pkg, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				out[path] = fileStamp{info.Size(), info.ModTime()}
			}
		}
		return nil
	})
	return out
}

type fileStamp struct {
	size int64
	mod  time.Time
}

// notKept are the extensions of files a run writes that are not logs or
// results: code copied about, and checkpoints.
var notKept = []string{".sh", ".py", ".pyc", ".so", ".whl", ".ckpt", ".om", ".pb", ".onnx"}

// collectFiles keeps the package's logs and results: the regular files the
// run wrote or changed (before is the copy's snapshot), but for code and
// checkpoints, up to limit bytes in all, into files; it returns their
// names and those skipped with why.
func collectFiles(pkg string, before map[string]fileStamp, limit int, files map[string][]byte) (kept, skipped []string) {
	type cand struct {
		rel  string
		size int64
	}
	var cs []cand
	_ = filepath.WalkDir(pkg, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if was, ok := before[path]; ok && was.size == info.Size() && was.mod.Equal(info.ModTime()) {
			return nil
		}
		rel, _ := filepath.Rel(pkg, path)
		rel = filepath.ToSlash(rel)
		for _, ext := range notKept {
			if strings.HasSuffix(rel, ext) {
				return nil
			}
		}
		cs = append(cs, cand{rel, info.Size()})
		return nil
	})
	sort.Slice(cs, func(i, j int) bool { return cs[i].rel < cs[j].rel })
	used := 0
	for _, c := range cs {
		if int64(used)+c.size > int64(limit) {
			skipped = append(skipped, fmt.Sprintf("%s (%d bytes: over the %d bytes kept of the package's files)", c.rel, c.size, limit))
			continue
		}
		data, err := os.ReadFile(filepath.Join(pkg, filepath.FromSlash(c.rel)))
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s (%v)", c.rel, err))
			continue
		}
		used += len(data)
		files[c.rel] = data
		kept = append(kept, c.rel)
	}
	return kept, skipped
}

// ErrNoLoadGen is wrapped by CheckInference's error when the package's
// Ais-Bench LoadGen Python module is not installed.
var ErrNoLoadGen = errors.New("the Ais-Bench LoadGen Python module `loadgen` is not installed")

// ErrInferenceUnsupported is wrapped by CheckInference's error when the
// package could run: aimeter does not run inference packages, whose own
// LoadGen times every query out of aimeter's sight (docs/ais-bench.md
// says what would have to change).
var ErrInferenceUnsupported = errors.New("aimeter does not run ais-bench inference packages: their own Ais-Bench LoadGen issues and times every query, out of aimeter's sight, so no GB/T inference figure would be measured by aimeter")

// CheckInference checks an inference package dir before anything runs:
// that it is a package, and whether python (the package's
// PYTHON_COMMAND; "" is python3) imports its Ais-Bench LoadGen module
// loadgen. Its error wraps ErrNoEntryScript, ErrNoLoadGen or, when the
// module is there, ErrInferenceUnsupported; it is never nil.
func CheckInference(ctx context.Context, dir, python string) error {
	if err := Check(dir); err != nil {
		return err
	}
	if python == "" {
		python = "python3"
	}
	if _, err := exec.LookPath(python); err != nil {
		return fmt.Errorf("%s: %w (%s is not installed: %v); the package's benchmark.sh checks for it and for aclruntime first", dir, ErrNoLoadGen, python, err)
	}
	// A folder named loadgen (a namespace package) is not the module.
	cmd := exec.CommandContext(ctx, python, "-c", "import sys, loadgen; sys.exit(0 if getattr(loadgen, '__file__', None) else 'loadgen is a bare folder, not the module')")
	cmd.Env = os.Environ()
	cmd.Dir = filepath.Join(dir, "code")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w for %s (%s): it comes with the Ais-Bench LoadGen release (Ais-Bench-LoadGen-<arch>-1.1.tar.gz, the loadgen-0.0.1 wheel), which aimeter does not provide; aimeter's LoadGen is a Go library, not that module (docs/ais-bench.md)", dir, ErrNoLoadGen, python, strings.TrimSpace(lastLine(string(out))))
	}
	return fmt.Errorf("%s: %w (docs/ais-bench.md)", dir, ErrInferenceUnsupported)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
