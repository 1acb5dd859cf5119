// Package recompute checks a received run bundle against its own raw
// records: it reads the bundle (bundle.Read, which checks every digest of
// its manifest and refuses records no run can have written), regenerates
// every derived file from the raw parts with the same code that the run used
// (derived.Of(b).Regenerate, as `aimeter report` does) and compares them with
// the derived files the bundle claims. A claimed metric that the records do
// not support is a Difference naming the file, the metric, the claimed and
// the recomputed value.
//
// This is how a tester trusts only raw records and its own computation, not
// the figures a tested party sends (GB-6.7.2-a, GB-6.7.2-b).
package recompute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/version"
)

// Options tune Check. The zero value regenerates into a temporary directory
// that Check removes, and compares files byte for byte only when the
// bundle's generator is this aimeter version.
type Options struct {
	// WorkDir is where the derived files are regenerated; it must not be
	// the bundle's directory. "" makes (and removes) a temporary
	// directory.
	WorkDir string
	// Version is the aimeter version of this process, compared with the
	// bundle's generator; "" means version.String().
	Version string
}

// Difference is one claim of the bundle that the recomputation does not
// support.
type Difference struct {
	// File is the derived file, e.g. "result.json".
	File string `json:"file"`
	// Metric is the JSON path of the value in File ("latency_ns.p99"), or
	// "" when the file differs as a whole (a text log, a page).
	Metric string `json:"metric,omitempty"`
	// Claimed and Recomputed are the values (JSON text); for a whole file,
	// a short description (its size and first differing line).
	Claimed    string `json:"claimed"`
	Recomputed string `json:"recomputed"`
}

// String says what differs, for a refusal reason.
func (d Difference) String() string {
	if d.Metric == "" {
		return fmt.Sprintf("%s: claimed %s, recomputed %s", d.File, d.Claimed, d.Recomputed)
	}
	return fmt.Sprintf("%s: %s claimed %s, recomputed %s", d.File, d.Metric, d.Claimed, d.Recomputed)
}

// Report is what Check found.
type Report struct {
	// Generator is the manifest's generator ("aimeter <version>").
	Generator string `json:"generator"`
	// SameVersion is whether the generator is this aimeter version; when
	// not, text files are not compared byte for byte (a newer version may
	// format differently), only the JSON results metric by metric.
	SameVersion bool `json:"same_version"`
	// Compared are the derived files compared.
	Compared []string `json:"compared"`
	// Differences are the claims not supported; empty when the bundle
	// stands.
	Differences []Difference `json:"differences,omitempty"`
	// Unclaimed are what this version derives from the raw records but a
	// bundle of another generator does not hold: whole files, or metrics as
	// "file: path". They are no claims of the bundle, so no differences
	// (an older aimeter did not derive them); for a bundle of this version
	// they are differences instead.
	Unclaimed []string `json:"unclaimed,omitempty"`
	// Result is the recomputed result.json; nil for a training bundle.
	Result *derived.ResultJSON `json:"result,omitempty"`
	// Bundle is the bundle as bundle.Read returned it (its digests
	// verified), for a caller that stores it next.
	Bundle *bundle.Bundle `json:"-"`
	// Derived is the derivation of Bundle that the recomputation used, its
	// metrics computed once (store.IngestOptions.Derived takes it).
	Derived *derived.Set `json:"-"`
}

// OK reports whether the recomputation supports every claim.
func (r *Report) OK() bool { return len(r.Differences) == 0 }

// jsonFiles are the derived files compared value by value rather than byte
// by byte.
var jsonFiles = map[string]bool{
	bundle.ResultFile:    true,
	bundle.GBTResultFile: true,
	"gbt_training.json":  true,
}

// Check reads the bundle in dir, regenerates its derived files and compares
// them with the ones it holds. An error means the bundle could not be read
// (a digest that differs, records no run can write: *bundle.DigestError,
// *bundle.RecordsError) or regenerated; a bundle that reads but claims
// what its records do not support gives a Report with Differences.
func Check(dir string, opts Options) (*Report, error) {
	b, err := derived.Read(dir)
	if err != nil {
		return nil, err
	}
	work := opts.WorkDir
	if work == "" {
		work, err = os.MkdirTemp("", "aimeter-recompute")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	}
	if same, err := sameDir(dir, work); err != nil {
		return nil, err
	} else if same {
		return nil, errors.New("recompute: Options.WorkDir is the bundle's own directory")
	}
	set := derived.Of(b)
	rep := &Report{Generator: b.Manifest.Generator, Bundle: b, Derived: set}
	names, err := set.Regenerate(work)
	if err != nil {
		return nil, fmt.Errorf("recompute: regenerating the derived files: %w", err)
	}
	ver := opts.Version
	if ver == "" {
		ver = version.String()
	}
	rep.SameVersion = b.Manifest.Generator == "aimeter "+ver
	regenerated := map[string]bool{}
	for _, n := range names {
		regenerated[n] = true
	}
	claimed := map[string]bool{}
	for _, e := range b.Manifest.Files {
		if e.Role == bundle.Derived {
			claimed[e.Name] = true
		}
	}
	all := []string{}
	for n := range claimed {
		all = append(all, n)
	}
	for n := range regenerated {
		if !claimed[n] {
			all = append(all, n)
		}
	}
	sort.Strings(all)
	for _, n := range all {
		switch {
		case !regenerated[n]:
			rep.Differences = append(rep.Differences, Difference{File: n, Claimed: "present", Recomputed: "no such file derives from the raw records"})
			continue
		case !claimed[n] && !rep.SameVersion:
			rep.Unclaimed = append(rep.Unclaimed, n)
			continue
		case !claimed[n]:
			rep.Differences = append(rep.Differences, Difference{File: n, Claimed: "absent", Recomputed: "derived from the raw records"})
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			return nil, err
		}
		want, err := os.ReadFile(filepath.Join(work, filepath.FromSlash(n)))
		if err != nil {
			return nil, err
		}
		base := filepath.Base(n)
		if jsonFiles[base] {
			rep.Compared = append(rep.Compared, n)
			diffs, err := compareJSON(n, got, want)
			if err != nil {
				return nil, err
			}
			for _, d := range diffs {
				if !rep.SameVersion && d.Claimed == absent {
					rep.Unclaimed = append(rep.Unclaimed, n+": "+d.Metric)
					continue
				}
				rep.Differences = append(rep.Differences, d)
			}
			continue
		}
		if !rep.SameVersion {
			continue
		}
		rep.Compared = append(rep.Compared, n)
		if !bytes.Equal(got, want) {
			rep.Differences = append(rep.Differences, fileDifference(n, got, want))
		}
	}
	if b.Result != nil {
		r, err := set.Result()
		if err != nil {
			return nil, err
		}
		rep.Result = r
	}
	return rep, nil
}

func sameDir(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

// absent stands for a JSON value one side does not hold.
const absent = "(absent)"

// compareJSON compares two JSON documents leaf by leaf and names each path
// whose value differs (numbers compared as numbers, so 1e3 equals 1000).
func compareJSON(file string, claimed, recomputed []byte) ([]Difference, error) {
	var c, r any
	if err := unmarshal(claimed, &c); err != nil {
		return []Difference{{File: file, Claimed: "not JSON: " + err.Error(), Recomputed: fmt.Sprintf("%d bytes of JSON", len(recomputed))}}, nil
	}
	if err := unmarshal(recomputed, &r); err != nil {
		return nil, fmt.Errorf("recompute: the regenerated %s is not JSON: %w", file, err)
	}
	cl, rl := map[string]string{}, map[string]string{}
	flatten("", c, cl)
	flatten("", r, rl)
	keys := []string{}
	for k := range cl {
		keys = append(keys, k)
	}
	for k := range rl {
		if _, ok := cl[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []Difference
	for _, k := range keys {
		cv, cok := cl[k]
		rv, rok := rl[k]
		if !cok {
			cv = absent
		}
		if !rok {
			rv = absent
		}
		if cv != rv {
			out = append(out, Difference{File: file, Metric: k, Claimed: cv, Recomputed: rv})
		}
	}
	return out, nil
}

func unmarshal(data []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// flatten writes every leaf of v under its dotted path ("a.b", "a[2].c").
func flatten(path string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[path] = "{}"
		}
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		if len(x) == 0 {
			out[path] = "[]"
		}
		for i, e := range x {
			flatten(path+"["+strconv.Itoa(i)+"]", e, out)
		}
	case json.Number:
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) {
			out[path] = x.String()
		} else {
			out[path] = strconv.FormatFloat(f, 'g', -1, 64)
		}
	default:
		b, _ := json.Marshal(x)
		out[path] = string(b)
	}
}

// fileDifference describes how two versions of a text file differ: their
// sizes and the first line that differs.
func fileDifference(name string, claimed, recomputed []byte) Difference {
	cl := bytes.Split(claimed, []byte("\n"))
	rl := bytes.Split(recomputed, []byte("\n"))
	line := 0
	for line < len(cl) && line < len(rl) && bytes.Equal(cl[line], rl[line]) {
		line++
	}
	show := func(ls [][]byte) string {
		if line >= len(ls) {
			return "(end of file)"
		}
		s := string(ls[line])
		if len(s) > 120 {
			s = s[:120] + "…"
		}
		return strconv.Quote(s)
	}
	return Difference{
		File:       name,
		Claimed:    fmt.Sprintf("%d bytes, line %d %s", len(claimed), line+1, show(cl)),
		Recomputed: fmt.Sprintf("%d bytes, line %d %s", len(recomputed), line+1, show(rl)),
	}
}
