package aisbench

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RankFile is one per-rank result file a workload wrote for get_result:
// throughput_rank_<N> (a bare float, samples/s, calc_result.py) or
// result_rank_<N>.json ({"train"|"finetune": {"key": [values…]}},
// calc_llm_result.py).
type RankFile struct {
	// Name is the file's path relative to the package.
	Name string `json:"name"`
	Rank int    `json:"rank"`
	// Throughput is the rank's throughput read from the file; nil when it
	// holds none or not a number (Error says why).
	Throughput *float64 `json:"throughput,omitempty"`
	// Values are a result_rank JSON file's keys, by mode then key, as
	// written.
	Values map[string]map[string][]json.RawMessage `json:"values,omitempty"`
	Error  string                                  `json:"error,omitempty"`
}

var rankName = regexp.MustCompile(`^(throughput_rank_(\d+)|result_rank_(\d+)\.json)$`)

// maxRankFile bounds the size of a per-rank file read.
const maxRankFile = 1 << 20

// readRankFiles finds the per-rank files under pkg. get_result copies the
// work folder's results into result/, so the same file may be found
// twice: only the folder holding the most of them is read.
func readRankFiles(pkg string) []RankFile {
	byDir := map[string][]string{}
	_ = filepath.WalkDir(pkg, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !rankName.MatchString(d.Name()) {
			return nil
		}
		byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], path)
		return nil
	})
	var best string
	for dir, fs := range byDir {
		if len(fs) > len(byDir[best]) || len(fs) == len(byDir[best]) && (best == "" || dir < best) {
			best = dir
		}
	}
	paths := byDir[best]
	sort.Strings(paths)
	var out []RankFile
	for _, p := range paths {
		rel, _ := filepath.Rel(pkg, p)
		data, err := readSmall(p)
		rf := ParseRankFile(filepath.ToSlash(rel), data)
		if err != nil {
			rf.Error = err.Error()
		}
		out = append(out, rf)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Rank < out[j].Rank })
	return out
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRankFile+1))
	if err == nil && len(data) > maxRankFile {
		return nil, errors.New("over 1 MiB: not read")
	}
	return data, err
}

// ParseRankFile reads one per-rank file named name (a path whose base is
// throughput_rank_<N> or result_rank_<N>.json).
func ParseRankFile(name string, data []byte) RankFile {
	rf := RankFile{Name: name}
	m := rankName.FindStringSubmatch(filepath.Base(name))
	if m == nil {
		rf.Error = "not a per-rank file name"
		return rf
	}
	n := m[2] + m[3]
	rf.Rank, _ = strconv.Atoi(n)
	if m[2] != "" {
		v, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			rf.Error = "the throughput is not a number: " + strconv.Quote(clip(string(data), 60))
			return rf
		}
		rf.Throughput = &v
		return rf
	}
	if err := json.Unmarshal(data, &rf.Values); err != nil {
		rf.Error = "not the {mode: {key: [values]}} JSON of calc_llm_result.py: " + clip(err.Error(), 120)
		rf.Values = nil
		return rf
	}
	sum, any := 0.0, false
	for _, keys := range rf.Values {
		for _, v := range keys["throughput_ratio"] {
			if f, ok := rawNumber(v); ok {
				sum, any = sum+f, true
			}
		}
	}
	if any {
		rf.Throughput = &sum
	}
	return rf
}

// rawNumber reads a JSON number, or a string holding one.
func rawNumber(v json.RawMessage) (float64, bool) {
	var f float64
	if err := json.Unmarshal(v, &f); err == nil {
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
