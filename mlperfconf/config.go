package mlperfconf

// This file reads LoadGen's config files (mlperf.conf, user.conf,
// audit.config) the way mlperf::TestSettings::FromConfig does
// (loadgen/test_settings_internal.cc), and applies them to loadgen.Settings.
// Every rule below states the C++ behaviour it follows.

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"aimeter/loadgen"
)

// builtinConfText is LoadGen's mlperf.conf as of LoadGen 6.0.17; LoadGen
// compiles the same file into the library.
//
//go:embed mlperf.conf
var builtinConfText []byte

// builtinConfName is the file name used in errors and warnings about the
// embedded mlperf.conf.
const builtinConfName = "mlperf.conf"

// Kind says which of LoadGen's config files a Config is, which decides
// the keys Apply may read from it.
type Kind int

// The three kinds of config file, with the numbers FromConfig's conf_type uses.
const (
	// BuiltinConf is mlperf.conf (conf_type 0): the only file from which the
	// RNG seeds, accuracy_log_probability and the test05 keys are read.
	BuiltinConf Kind = iota
	// UserConf is a user.conf (conf_type 1).
	UserConf
	// AuditConf is an audit.config (conf_type 2). LoadGen applies it with the
	// model "*", so its model-specific lines are never read; Apply does the same.
	AuditConf
)

// String returns "mlperf.conf", "user.conf" or "audit.config".
func (k Kind) String() string {
	switch k {
	case BuiltinConf:
		return "mlperf.conf"
	case UserConf:
		return "user.conf"
	case AuditConf:
		return "audit.config"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Entry is one `key = value` setting of a config file.
type Entry struct {
	// Key is "model.scenario.name" exactly as written (LoadGen does not check
	// its shape; a key without two dots is kept but can never be looked up).
	Key string
	// Value is the raw value token. It is a whole C integer (strtoul, base 0)
	// or a whole C double (strtod); Parse rejects anything else.
	Value string
	// Line is the 1-based line of the definition that won (the last one).
	Line int
	// Uint is what LoadGen reads for an integer setting: strtoull(Value, 0),
	// which stops at the first character that does not fit, so "1.5" reads
	// as 1, "1e3" as 1, "010" as 8, "08" as 0, "inf" as 0 and "-1" as
	// 2^64-1.
	Uint uint64
	// Float is what LoadGen reads for a floating-point setting:
	// strtod(Value), so "010" reads as 10, "0x10" as 16 and "inf" as +Inf.
	Float float64
}

// Config holds the parsed entries of one config file. Build it with
// Parse or Builtin; the zero value is an empty config.
type Config struct {
	// Name is the file name used in messages.
	Name string
	// Warnings lists, as "file:line: text", the lines LoadGen silently
	// ignores or reads in a surprising way (`a=b` without spaces, a key with
	// no value, several values on one line, a key defined twice).
	Warnings []string

	entries map[string]Entry
}

// Error is a problem with one line or key of a config file.
type Error struct {
	File string // the file name given to Parse
	Line int    // 1-based line number; 0 when not tied to a line
	Key  string // the key (or, for a malformed line, its first token)
	Msg  string
}

// Error formats the error as "file:line: key "k": msg".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: key %q: %s", e.File, e.Line, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: key %q: %s", e.File, e.Key, e.Msg)
}

// Parse reads a LoadGen config file with FromConfig's syntax rules; name
// is used in errors and warnings. Each line is split into tokens at C
// whitespace (space, \t, \v, \f, \r; lines end at \n) and read left to right:
//
//   - A token that is exactly "#" ends the line while a key or the "=" is
//     awaited, so "# text" is a comment and "key # text" is ignored. "#text"
//     is an ordinary token.
//   - The first token is the key. A line with only a key (including `a=b`,
//     which is one token) is ignored without error, as in LoadGen; it is
//     recorded in Warnings.
//   - The second token must be exactly "=", otherwise the line is an error
//     ("a =b" and "a= b" are errors).
//   - Every later token is a value: it must be a whole C integer (strtoul,
//     base 0: decimal, 0x hex, leading-0 octal, optional sign) or a whole C
//     double (strtod in the C locale: decimal or hex floats with optional
//     exponent, inf, infinity, nan, nan(chars), optional sign). Otherwise the
//     line is an error; this is why a trailing "# comment" after a value is
//     an error. When a line has several valid values the last one is kept,
//     as LoadGen does ("k = 1 2" sets k to 2).
//   - "key =" with no value sets nothing and is not an error (recorded in
//     Warnings).
//
// A key defined again later replaces the earlier value (recorded in
// Warnings). A UTF-8 byte-order mark at the start of the input is skipped
// (recorded in Warnings); here aimeter departs from LoadGen, which would
// take it for part of the first key and ignore line 1. LoadGen counts every bad line and then fails the whole file;
// Parse likewise reports all of them, joined, each a *Error, and
// returns a nil Config.
func Parse(r io.Reader, name string) (*Config, error) {
	c, err := parseConfig(r, name)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ParseFile opens and parses the config file at path, naming it by path
// in errors and warnings.
func ParseFile(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// utf8BOM is the UTF-8 byte-order mark, U+FEFF.
const utf8BOM = "\xEF\xBB\xBF"

// parseConfig returns everything it could parse together with the errors.
func parseConfig(r io.Reader, name string) (*Config, error) {
	c := &Config{Name: name, entries: map[string]Entry{}}
	var errs []error
	br := bufio.NewReader(r)
	// A UTF-8 byte-order mark (as Windows editors write) is skipped. LoadGen
	// would read it as part of the first key and so silently ignore line 1;
	// the warning says that this reading differs from LoadGen's.
	if head, err := br.Peek(len(utf8BOM)); err == nil && string(head) == utf8BOM {
		_, _ = br.Discard(len(utf8BOM))
		c.warnf(1, "the file starts with a UTF-8 byte-order mark, which aimeter skips; LoadGen reads it as part of the first key and ignores that line")
	}
	lineNr := 0
	for {
		// std::getline: lines end at '\n'; a last line without one still
		// counts, an empty remainder after the final '\n' does not.
		line, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			return c, fmt.Errorf("%s: %w", name, rerr)
		}
		if line == "" && rerr == io.EOF {
			break
		}
		lineNr++
		line = strings.TrimSuffix(line, "\n")
		if err := c.parseLine(line, lineNr); err != nil {
			errs = append(errs, err)
		}
		if rerr == io.EOF {
			break
		}
	}
	return c, errors.Join(errs...)
}

// parseLine runs FromConfig's per-line state machine.
func (c *Config) parseLine(line string, lineNr int) error {
	const (
		wantKey = iota
		wantEqual
		wantValue
	)
	state := wantKey
	var key string
	values := 0
	toks := cTokens(line)
	for _, tok := range toks {
		if tok == "#" && state != wantValue {
			if state == wantEqual {
				c.warnf(lineNr, "key %q is followed by a comment and has no value; LoadGen ignores the line", key)
			}
			return nil
		}
		switch state {
		case wantKey:
			key = tok
			state = wantEqual
		case wantEqual:
			if tok != "=" {
				return &Error{File: c.Name, Line: lineNr, Key: key,
					Msg: fmt.Sprintf("expected 'key = value' (with spaces around '='), got %q after the key", tok)}
			}
			state = wantValue
		case wantValue:
			if !isCNumber(tok) {
				msg := fmt.Sprintf("value %q needs to be an integer or a double", tok)
				if strings.HasPrefix(tok, "#") {
					msg += " (LoadGen allows no comment after a value)"
				}
				return &Error{File: c.Name, Line: lineNr, Key: key, Msg: msg}
			}
			values++
			if values == 2 {
				c.warnf(lineNr, "key %q has several values; LoadGen keeps the last one", key)
			}
			if old, ok := c.entries[key]; ok && values == 1 {
				c.warnf(lineNr, "key %q is already set on line %d; the later value wins", key, old.Line)
			}
			c.entries[key] = newEntry(key, tok, lineNr)
		}
	}
	switch state {
	case wantEqual:
		if strings.Contains(key, "=") {
			c.warnf(lineNr, "%q is ignored: LoadGen needs spaces around '=' (write 'key = value')", key)
		} else {
			c.warnf(lineNr, "%q has no '= value'; LoadGen ignores the line", key)
		}
	case wantValue:
		if values == 0 {
			c.warnf(lineNr, "key %q has no value; LoadGen ignores the line", key)
		}
	}
	return nil
}

func (c *Config) warnf(lineNr int, format string, args ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: ", c.Name, lineNr)+fmt.Sprintf(format, args...))
}

func newEntry(key, value string, line int) Entry {
	u, _ := cStrtoull(value)
	f, _ := cStrtod(value)
	return Entry{Key: key, Value: value, Line: line, Uint: u, Float: f}
}

// cIsSpace is isspace in the C locale, which std::istream >> std::string
// uses to split tokens.
func cIsSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

// cTokens splits a line at C whitespace.
func cTokens(line string) []string {
	var toks []string
	i := 0
	for i < len(line) {
		for i < len(line) && cIsSpace(line[i]) {
			i++
		}
		j := i
		for j < len(line) && !cIsSpace(line[j]) {
			j++
		}
		if j > i {
			toks = append(toks, line[i:j])
		}
		i = j
	}
	return toks
}

// isCNumber reports whether tok is consumed whole by strtoul(tok, &end, 0) or
// by strtod(tok, &end), FromConfig's test for a valid value.
func isCNumber(tok string) bool {
	if _, n := cStrtoull(tok); n == len(tok) {
		return true
	}
	_, n := cStrtod(tok)
	return n == len(tok)
}

func hexVal(b byte) int {
	switch {
	case '0' <= b && b <= '9':
		return int(b - '0')
	case 'a' <= b && b <= 'f':
		return int(b-'a') + 10
	case 'A' <= b && b <= 'F':
		return int(b-'A') + 10
	}
	return 99
}

// cStrtoull mirrors glibc strtoull(s, &end, 0) (and strtoul on LP64): an
// optional sign, then "0x" + hex digits, a leading-0 octal number or a decimal
// number. It returns the value and the number of bytes consumed (0 when there
// is no number). Overflow saturates at 2^64-1; a '-' negates modulo 2^64.
// "0x" without a hex digit reads as the "0". Binary "0b" (C23, glibc ≥ 2.38
// with _GNU_SOURCE) is not accepted, as in the GCC 12 / glibc 2.36 builds the
// reference was checked against and the manylinux wheels.
func cStrtoull(s string) (uint64, int) {
	v, n, _ := cStrtoullRange(s)
	return v, n
}

// cStrtoullRange is cStrtoull that also says whether the number overflowed
// (strtoull's ERANGE) and so was saturated at 2^64-1.
func cStrtoullRange(s string) (uint64, int, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && hexVal(s[i+2]) < 16:
		base = 16
		i += 2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	start := i
	var v uint64
	overflow := false
	for i < len(s) {
		d := uint64(hexVal(s[i]))
		if d >= base {
			break
		}
		if !overflow {
			if v > (math.MaxUint64-d)/base {
				overflow = true
			} else {
				v = v*base + d
			}
		}
		i++
	}
	if i == start {
		return 0, 0, false
	}
	if overflow {
		return math.MaxUint64, i, true
	}
	if neg {
		v = -v
	}
	return v, i, false
}

// cStrtod mirrors glibc strtod(s, &end) in the C locale. It returns the value
// and the number of bytes consumed (0 when there is no number).
func cStrtod(s string) (float64, int) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	hasPrefixFold := func(at int, p string) bool {
		return len(s)-at >= len(p) && strings.EqualFold(s[at:at+len(p)], p)
	}
	switch {
	case hasPrefixFold(i, "infinity"):
		return sign(math.Inf(1)), i + 8
	case hasPrefixFold(i, "inf"):
		return sign(math.Inf(1)), i + 3
	case hasPrefixFold(i, "nan"):
		i += 3
		if i < len(s) && s[i] == '(' {
			j := i + 1
			for j < len(s) && (s[j] == '_' || hexVal(s[j]) < 10 || ('a' <= s[j]|0x20 && s[j]|0x20 <= 'z')) {
				j++
			}
			if j < len(s) && s[j] == ')' {
				i = j + 1
			}
		}
		return sign(math.NaN()), i
	}
	// Hexadecimal: "0x" needs a hex digit, or '.' and a hex digit, after it.
	if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		j := i + 2
		if j < len(s) && (hexVal(s[j]) < 16 || (s[j] == '.' && j+1 < len(s) && hexVal(s[j+1]) < 16)) {
			mant := j
			for j < len(s) && hexVal(s[j]) < 16 {
				j++
			}
			if j < len(s) && s[j] == '.' {
				j++
				for j < len(s) && hexVal(s[j]) < 16 {
					j++
				}
			}
			mantEnd := j
			exp := "0"
			if e, n := cExponent(s, j, 'p'); n > 0 {
				exp = e
				j += n
			}
			f, _ := strconv.ParseFloat("0x"+s[mant:mantEnd]+"p"+exp, 64)
			return sign(f), j
		}
		// Only the "0" is a number.
		return sign(0), i + 1
	}
	j := i
	digits := 0
	for j < len(s) && hexVal(s[j]) < 10 {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && hexVal(s[j]) < 10 {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	mantEnd := j
	exp := ""
	if e, n := cExponent(s, j, 'e'); n > 0 {
		exp = "e" + e
		j += n
	}
	f, _ := strconv.ParseFloat(s[i:mantEnd]+exp, 64) // ±Inf or 0 on range errors, as strtod
	return sign(f), j
}

// cExponent reads an exponent "e[+-]digits" (or "p…") at s[at:]; it returns
// the signed digits and the length consumed, or 0 when there is no complete
// exponent (strtod then stops before the 'e').
func cExponent(s string, at int, letter byte) (string, int) {
	if at >= len(s) || s[at]|0x20 != letter {
		return "", 0
	}
	j := at + 1
	signStr := ""
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		signStr = s[j : j+1]
		j++
	}
	k := j
	for k < len(s) && hexVal(s[k]) < 10 {
		k++
	}
	if k == j {
		return "", 0
	}
	// Keep the exponent short enough for strconv; anything this long is
	// already far beyond the float64 range either way.
	digits := strings.TrimLeft(s[j:k], "0")
	if digits == "" {
		digits = "0"
	}
	if len(digits) > 9 {
		digits = "999999999"
	}
	return signStr + digits, k - at
}

// Len returns the number of distinct keys.
func (c *Config) Len() int { return len(c.entries) }

// Get returns the entry for exactly this key.
func (c *Config) Get(key string) (Entry, bool) {
	e, ok := c.entries[key]
	return e, ok
}

// Entries returns all entries sorted by key.
func (c *Config) Entries() []Entry {
	out := make([]Entry, 0, len(c.entries))
	for _, e := range c.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Lookup finds setting name for model and scenario with LoadGen's precedence:
// "model.scenario.name", then "*.scenario.name", then "model.*.name", then
// "*.*.name".
func (c *Config) Lookup(model, scenario, name string) (Entry, bool) {
	for _, k := range [...]string{
		model + "." + scenario + "." + name,
		"*." + scenario + "." + name,
		model + ".*." + name,
		"*.*." + name,
	} {
		if e, ok := c.entries[k]; ok {
			return e, true
		}
	}
	return Entry{}, false
}

// Models returns the model keys that lines of the config name
// specifically (the first part of "model.scenario.name", other than "*"),
// sorted.
func (c *Config) Models() []string {
	set := map[string]bool{}
	for k := range c.entries {
		if m, _, _, ok := splitKey(k); ok && m != "*" && m != "" {
			set[m] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// Format writes the entries in a canonical form, one "key = value" line per
// key, sorted by key, without comments (preceded by an empty line when the
// first key starts with a byte-order mark, which Parse would otherwise skip). Parse reads it back to the same
// keys and values.
func (c *Config) Format(w io.Writer) error {
	var b bytes.Buffer
	entries := c.Entries()
	if len(entries) > 0 && strings.HasPrefix(entries[0].Key, utf8BOM) {
		// Parse skips a byte-order mark at the start of a file, so a key
		// that begins with one must not be the file's first bytes.
		b.WriteByte('\n')
	}
	for _, e := range entries {
		b.WriteString(e.Key)
		b.WriteString(" = ")
		b.WriteString(e.Value)
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// clone returns a copy whose Warnings can be changed without touching c.
func (c *Config) clone() *Config {
	cc := *c
	cc.Warnings = append([]string(nil), c.Warnings...)
	return &cc
}

var builtinConfig = sync.OnceValue(func() *Config {
	// The embedded file is checked by TestBuiltinParses; should it ever
	// fail, the entries parsed before the bad line are still used.
	c, _ := parseConfig(bytes.NewReader(builtinConfText), builtinConfName)
	return c
})

// Builtin returns the embedded mlperf.conf, parsed once. Each call
// returns a fresh *Config sharing the read-only entries.
func Builtin() *Config { return builtinConfig().clone() }

// settingKey is one lookup FromConfig makes: a setting name and, when not
// empty, the fixed scenario it is looked up under (otherwise the scenario
// being configured).
type settingKey struct {
	scenario string
	name     string
	builtin  bool // read only from mlperf.conf (conf_type 0)
}

// readKeys lists every lookup Apply makes, in FromConfig's order.
var readKeys = []settingKey{
	{"", "mode", false},
	{"", "qsl_rng_seed", true},
	{"", "sample_index_rng_seed", true},
	{"", "schedule_rng_seed", true},
	{"", "accuracy_log_probability", true},
	{"", "test05", true},
	{"", "test05_qsl_rng_seed", true},
	{"", "test05_sample_index_rng_seed", true},
	{"", "test05_schedule_rng_seed", true},
	{"", "use_token_latencies", false},
	{"Server", "ttft_latency", false},
	{"Server", "tpot_latency", false},
	{"", "infer_token_latencies", false},
	{"", "token_latency_scaling_factor", false},
	{"SingleStream", "target_latency_percentile", false},
	{"MultiStream", "target_latency_percentile", false},
	{"MultiStream", "samples_per_query", false},
	{"Server", "target_latency_percentile", false},
	{"Server", "target_latency", false},
	{"", "performance_issue_unique", false},
	{"", "performance_issue_same", false},
	{"", "performance_issue_same_index", false},
	{"", "sample_concatenate_permutation", false},
	{"Server", "coalesce_queries", false},
	{"Server", "max_async_queries", false},
	{"", "min_duration", false},
	{"", "max_duration", false},
	{"", "min_query_count", false},
	{"", "max_query_count", false},
	{"", "performance_sample_count_override", false},
	{"", "accuracy_sample_count_override", false},
	{"SingleStream", "target_latency", false},
	{"MultiStream", "target_latency", false},
	{"Server", "target_qps", false},
	{"Offline", "target_qps", false},
	{"", "print_timestamps", false},
	{"", "accuracy_log_rng_seed", false},
	{"", "accuracy_log_sampling_target", false},
}

// Apply sets the fields of s that this config sets for model and scenario,
// reading exactly the keys FromConfig reads, with its units and quirks:
//
//   - mode (0 SubmissionRun, 1 AccuracyOnly, 2 PerformanceOnly,
//     3 FindPeakPerformance); another value is an error (LoadGen logs an
//     error and keeps the mode), reported before anything is changed.
//   - Only for BuiltinConf: qsl_rng_seed, sample_index_rng_seed,
//     schedule_rng_seed, accuracy_log_probability (percent, ×0.01), test05
//     (true only for 1) and the three test05_*_rng_seed.
//   - use_token_latencies (true only for 1); then, if token latencies are on
//     (from this or an earlier file), ttft_latency and tpot_latency, looked up
//     under scenario "Server" whatever the scenario, ms → ns.
//   - infer_token_latencies (true only for 1); then, if on,
//     token_latency_scaling_factor.
//   - target_latency_percentile (percent ×0.01), looked up separately under
//     SingleStream, MultiStream and Server; MultiStream samples_per_query;
//     Server target_latency (integer ms × 1e6 → ns, so "2.5" reads as 2 ms).
//   - performance_issue_unique, performance_issue_same (true unless 0),
//     performance_issue_same_index, sample_concatenate_permutation (true only
//     for 1); Server coalesce_queries (true unless 0) and Server
//     max_async_queries (which LoadGen passes through a 32-bit int).
//   - min_duration, max_duration (ms), min_query_count, max_query_count,
//     performance_sample_count_override, accuracy_sample_count_override.
//   - SingleStream and MultiStream target_latency (floating ms × 1e6 → the
//     expected-latency hint in ns, truncated to whole ns since the Go field
//     is an integer); Server target_qps and Offline target_qps (floating).
//   - print_timestamps (true unless 0), accuracy_log_rng_seed,
//     accuracy_log_sampling_target.
//
// Keys without a scenario above are looked up under scenario; integer keys
// read Entry.Uint and floating keys Entry.Float. Other keys are ignored, like
// LoadGen (Unused lists them). For AuditConf the model is always "*", as in
// LoadGen's StartTest, so model-specific lines of an audit.config are never
// read. An empty model means "*" too. Apply does not call s.Validate.
func (c *Config) Apply(s *loadgen.Settings, model string, scenario loadgen.Scenario, kind Kind) error {
	return c.apply(s, model, scenario, kind, nil, nil)
}

// ApplyWarn is Apply that also returns the warnings of c: those Parse
// recorded (c.Warnings) followed by the values LoadGen reads in a
// surprising way (a negative integer wrapping, a fraction or exponent cut
// by strtoull, an integer saturating at 2^64-1, a leading-0 octal, a product
// that wraps, a setting that this kind of file may not set), each as
// "file:line: key "k": text". Load does the same for the files it reads.
func (c *Config) ApplyWarn(s *loadgen.Settings, model string, scenario loadgen.Scenario, kind Kind) ([]string, error) {
	warnings := slices.Clone(c.Warnings)
	err := c.apply(s, model, scenario, kind, func(w string) { warnings = append(warnings, w) }, nil)
	return warnings, err
}

// apply is Apply with two optional hooks: warn receives remarks about values
// LoadGen reads in a surprising way, and seen receives every lookup made.
func (c *Config) apply(s *loadgen.Settings, model string, scenario loadgen.Scenario, kind Kind,
	warn func(string), seen func(settingKey)) error {
	if scenario < loadgen.SingleStream || scenario > loadgen.Offline {
		return fmt.Errorf("%s: unknown scenario %v", c.Name, scenario)
	}
	if kind < BuiltinConf || kind > AuditConf {
		return fmt.Errorf("%s: unknown config kind %v", c.Name, kind)
	}
	if model == "" || kind == AuditConf {
		model = "*"
	}
	scen := scenario.String()
	warnf := func(e Entry, format string, args ...any) {
		if warn != nil {
			warn(fmt.Sprintf("%s:%d: key %q: ", c.Name, e.Line, e.Key) + fmt.Sprintf(format, args...))
		}
	}
	find := func(fixedScenario, name string) (Entry, bool) {
		sc := scen
		if fixedScenario != "" {
			sc = fixedScenario
		}
		if seen != nil {
			seen(settingKey{scenario: fixedScenario, name: name, builtin: isBuiltinOnly(name)})
		}
		return c.Lookup(model, sc, name)
	}
	// Integer lookup: strtoull(value) × multiplier, wrapping like uint64_t.
	uintKey := func(fixedScenario, name string, mult uint64, dst *uint64) bool {
		e, ok := find(fixedScenario, name)
		if !ok {
			return false
		}
		if r := intReadingRemark(e); r != "" {
			warnf(e, "%s", r)
		}
		if mult > 1 && e.Uint > math.MaxUint64/mult {
			warnf(e, "value %s × %d does not fit in 64 bits and wraps to %d (LoadGen multiplies without a check)", e.Value, mult, e.Uint*mult)
		}
		*dst = e.Uint * mult
		return true
	}
	// Floating lookup: strtod(value) × multiplier.
	floatKey := func(fixedScenario, name string, mult float64, dst *float64) bool {
		e, ok := find(fixedScenario, name)
		if !ok {
			return false
		}
		if r := floatReadingRemark(e); r != "" {
			warnf(e, "%s", r)
		}
		*dst = e.Float * mult
		return true
	}
	boolKey := func(fixedScenario, name string, onlyOne bool, dst *bool) {
		var v uint64
		if uintKey(fixedScenario, name, 1, &v) {
			if onlyOne {
				*dst = v == 1
			} else {
				*dst = v != 0
			}
		}
	}

	// mode first, as FromConfig does; an invalid value changes nothing.
	if e, ok := c.Lookup(model, scen, "mode"); ok {
		if e.Uint > uint64(loadgen.FindPeakPerformance) {
			return &Error{File: c.Name, Line: e.Line, Key: e.Key,
				Msg: fmt.Sprintf("invalid mode %s (want 0 SubmissionRun, 1 AccuracyOnly, 2 PerformanceOnly or 3 FindPeakPerformance)", e.Value)}
		}
	}
	var v uint64
	if uintKey("", "mode", 1, &v) {
		s.Mode = loadgen.Mode(v)
	}

	if kind == BuiltinConf {
		uintKey("", "qsl_rng_seed", 1, &s.QSLRNGSeed)
		uintKey("", "sample_index_rng_seed", 1, &s.SampleIndexRNGSeed)
		uintKey("", "schedule_rng_seed", 1, &s.ScheduleRNGSeed)
		floatKey("", "accuracy_log_probability", 0.01, &s.AccuracyLogProbability)
		boolKey("", "test05", true, &s.Test05)
		uintKey("", "test05_qsl_rng_seed", 1, &s.Test05QSLRNGSeed)
		uintKey("", "test05_sample_index_rng_seed", 1, &s.Test05SampleIndexRNGSeed)
		uintKey("", "test05_schedule_rng_seed", 1, &s.Test05ScheduleRNGSeed)
	} else if warn != nil {
		for _, k := range readKeys {
			if !k.builtin {
				continue
			}
			if e, ok := c.Lookup(model, scen, k.name); ok {
				warnf(e, "%s is read only from mlperf.conf; LoadGen ignores it in a %s", k.name, kind)
			}
		}
	}

	boolKey("", "use_token_latencies", true, &s.UseTokenLatencies)
	if s.UseTokenLatencies {
		uintKey("Server", "ttft_latency", 1_000_000, &s.ServerTTFTLatencyNs)
		uintKey("Server", "tpot_latency", 1_000_000, &s.ServerTPOTLatencyNs)
	}
	boolKey("", "infer_token_latencies", true, &s.InferTokenLatencies)
	if s.InferTokenLatencies {
		uintKey("", "token_latency_scaling_factor", 1, &s.TokenLatencyScalingFactor)
	}

	floatKey("SingleStream", "target_latency_percentile", 0.01, &s.SingleStreamTargetLatencyPercentile)
	floatKey("MultiStream", "target_latency_percentile", 0.01, &s.MultiStreamTargetLatencyPercentile)
	uintKey("MultiStream", "samples_per_query", 1, &s.MultiStreamSamplesPerQuery)
	floatKey("Server", "target_latency_percentile", 0.01, &s.ServerTargetLatencyPercentile)
	uintKey("Server", "target_latency", 1_000_000, &s.ServerTargetLatencyNs)

	boolKey("", "performance_issue_unique", false, &s.PerformanceIssueUnique)
	boolKey("", "performance_issue_same", false, &s.PerformanceIssueSame)
	uintKey("", "performance_issue_same_index", 1, &s.PerformanceIssueSameIndex)
	boolKey("", "sample_concatenate_permutation", true, &s.SampleConcatenatePermutation)
	boolKey("Server", "coalesce_queries", false, &s.ServerCoalesceQueries)
	if uintKey("Server", "max_async_queries", 1, &v) {
		// server_max_async_queries = int(val): a 32-bit int on LP64 Linux,
		// converted back to uint64_t.
		s.ServerMaxAsyncQueries = uint64(int64(int32(uint32(v))))
		if v > math.MaxInt32 {
			e, _ := c.Lookup(model, "Server", "max_async_queries")
			warnf(e, "value %d does not fit LoadGen's int and becomes %d", v, s.ServerMaxAsyncQueries)
		}
	}

	uintKey("", "min_duration", 1, &s.MinDurationMs)
	uintKey("", "max_duration", 1, &s.MaxDurationMs)
	uintKey("", "min_query_count", 1, &s.MinQueryCount)
	uintKey("", "max_query_count", 1, &s.MaxQueryCount)
	uintKey("", "performance_sample_count_override", 1, &s.PerformanceSampleCountOverride)
	uintKey("", "accuracy_sample_count_override", 1, &s.AccuracySampleCountOverride)
	var f float64
	if floatKey("SingleStream", "target_latency", 1e6, &f) {
		s.SingleStreamExpectedLatencyNs = floatToNs(f)
	}
	if floatKey("MultiStream", "target_latency", 1e6, &f) {
		s.MultiStreamExpectedLatencyNs = floatToNs(f)
	}
	floatKey("Server", "target_qps", 1, &s.ServerTargetQPS)
	floatKey("Offline", "target_qps", 1, &s.OfflineExpectedQPS)

	boolKey("", "print_timestamps", false, &s.PrintTimestamps)
	uintKey("", "accuracy_log_rng_seed", 1, &s.AccuracyLogRNGSeed)
	uintKey("", "accuracy_log_sampling_target", 1, &s.AccuracyLogSamplingTarget)
	return nil
}

// intReadingRemark explains an integer reading of e that differs from what
// the text suggests, or returns "".
func intReadingRemark(e Entry) string {
	v := e.Value
	if _, n, over := cStrtoullRange(v); over {
		if n < len(v) {
			return fmt.Sprintf("value %s is read up to %q, which is beyond 2^64-1 and saturates to %d (LoadGen reads this setting with strtoull)", shorten(v), shorten(v[:n]), e.Uint)
		}
		return fmt.Sprintf("value %s is beyond 2^64-1 and saturates to %d (LoadGen reads this setting with strtoull)", shorten(v), e.Uint)
	}
	if !isCInteger(v) {
		if float64(e.Uint) != e.Float {
			_, n := cStrtoull(v)
			return fmt.Sprintf("value %s is read as the integer %d: strtoull stops before %q (LoadGen reads this setting with strtoull)", shorten(v), e.Uint, shorten(v[n:]))
		}
		return ""
	}
	digits := strings.TrimLeft(v, "+-")
	if strings.HasPrefix(v, "-") && e.Uint != 0 {
		return fmt.Sprintf("negative value %s wraps to %d (LoadGen reads this setting with strtoull)", v, e.Uint)
	}
	if len(digits) > 1 && digits[0] == '0' && digits[1]|0x20 != 'x' && e.Uint != 0 {
		return fmt.Sprintf("value %s has a leading 0 and is read as octal: %d", v, e.Uint)
	}
	return ""
}

// floatReadingRemark explains a floating-point reading of e that differs
// from what the text says (strtod's overflow to infinity or underflow to
// zero), or returns "".
func floatReadingRemark(e Entry) string {
	v := strings.TrimLeft(e.Value, "+-")
	if len(v) >= 3 && (strings.EqualFold(v[:3], "inf") || strings.EqualFold(v[:3], "nan")) {
		return ""
	}
	hex := len(v) > 1 && v[0] == '0' && v[1]|0x20 == 'x'
	mant := v
	if hex {
		mant = v[2:]
		if i := strings.IndexAny(mant, "pP"); i >= 0 {
			mant = mant[:i]
		}
	} else if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	switch {
	case math.IsInf(e.Float, 0):
		return fmt.Sprintf("value %s is beyond the range of a double and reads as %v (LoadGen reads this setting with strtod)", shorten(e.Value), e.Float)
	case e.Float == 0 && strings.Trim(mant, "0.") != "":
		return fmt.Sprintf("value %s is below the range of a double and reads as 0 (LoadGen reads this setting with strtod)", shorten(e.Value))
	}
	return ""
}

// shorten returns v, or for a value longer than 40 bytes its first 30 bytes
// and its length, so that a warning about a huge value stays readable.
func shorten(v string) string {
	if len(v) <= 40 {
		return v
	}
	return fmt.Sprintf("%s… (%d characters)", v[:30], len(v))
}

// splitKey splits "model.scenario.name" at its last two dots (model names
// such as "wan-2.2-t2v-a14b" contain dots).
func splitKey(key string) (model, scenario, name string, ok bool) {
	j := strings.LastIndexByte(key, '.')
	if j < 0 {
		return "", "", "", false
	}
	i := strings.LastIndexByte(key[:j], '.')
	if i < 0 {
		return "", "", "", false
	}
	return key[:i], key[i+1 : j], key[j+1:], true
}

// isCInteger reports whether strtoul consumes all of tok.
func isCInteger(tok string) bool {
	_, n := cStrtoull(tok)
	return n == len(tok)
}

func isBuiltinOnly(name string) bool {
	for _, k := range readKeys {
		if k.name == name {
			return k.builtin
		}
	}
	return false
}

// floatToNs converts LoadGen's double expected latency (ns) to the integer
// Go field: truncated toward zero; NaN and values ≤ 0 give 0 (which
// Settings.Validate rejects), values ≥ 2^64 give 2^64-1.
func floatToNs(f float64) uint64 {
	switch {
	case !(f > 0):
		return 0
	case f >= 1<<64:
		return math.MaxUint64
	}
	return uint64(f)
}

// Unused returns, sorted, the keys that Apply(s, model, scenario, kind) never
// reads: settings LoadGen does not know, lines for other models or
// scenarios, keys shadowed by a more specific key, mlperf.conf-only keys in
// another kind of file, and, for AuditConf, every model-specific line.
// Conditional keys (ttft_latency, tpot_latency,
// token_latency_scaling_factor) count as read.
func (c *Config) Unused(model string, scenario loadgen.Scenario, kind Kind) []string {
	if model == "" || kind == AuditConf {
		model = "*"
	}
	used := map[string]bool{}
	for _, k := range readKeys {
		if k.builtin && kind != BuiltinConf {
			continue
		}
		sc := scenario.String()
		if k.scenario != "" {
			sc = k.scenario
		}
		if e, ok := c.Lookup(model, sc, k.name); ok {
			used[e.Key] = true
		}
	}
	var out []string
	for _, e := range c.Entries() {
		if !used[e.Key] {
			out = append(out, e.Key)
		}
	}
	return out
}

// LoadOptions says which config files LoadSettings reads and for what test.
type LoadOptions struct {
	// Model is the model key of the config files ("resnet50",
	// "llama2-70b-interactive"); "" means "*" (only generic lines apply).
	Model string
	// Scenario is the scenario to configure.
	Scenario loadgen.Scenario
	// Mode is the test mode when ModeSet is true; otherwise the LoadGen
	// default, PerformanceOnly, is the starting point.
	Mode loadgen.Mode
	// ModeSet says Mode was chosen explicitly (a CLI flag). As in LoadGen, a
	// `mode` key in a config file still overrides it; LoadSettings then adds
	// a warning instead of doing so silently.
	ModeSet bool
	// MLPerfConfPath, if not empty, replaces the embedded mlperf.conf; the
	// file is then read as a BuiltinConf (seeds included).
	MLPerfConfPath string
	// UserConfPath, if not empty, is a user.conf applied after mlperf.conf.
	UserConfPath string
	// AuditConfigPath, if not empty and the file exists, is an audit.config
	// applied last (with model "*", as LoadGen's StartTest does with the
	// audit.config it finds in the working directory). A missing file is
	// skipped silently, like LoadGen.
	AuditConfigPath string
}

// AuditConfigWarning is the warning LoadGen logs when it finds audit.config.
const AuditConfigWarning = "Found Audit Config file (audit.config). Overriding TestSettings from audit.config file."

// LoadSettings builds the settings of a test the way a LoadGen harness and
// StartTest do: loadgen.DefaultSettings with the scenario and mode, then
// mlperf.conf (embedded, or MLPerfConfPath), then the user.conf if given, then
// the audit.config if given and present. It returns the settings, the
// warnings of every file read (parse remarks, values read in surprising
// ways, ignored keys, a mode overridden by a file, AuditConfigWarning), and
// the first error: a file that cannot be read or parsed, or an invalid mode
// value. It does not call Validate.
func LoadSettings(opts LoadOptions) (loadgen.Settings, []string, error) {
	l, err := Load(opts)
	return l.Settings, l.Warnings, err
}

// isFloatKey reports whether Apply reads k with strtod (a floating-point
// setting); every other key is read with strtoull.
func isFloatKey(k settingKey) bool {
	switch k.name {
	case "accuracy_log_probability", "target_latency_percentile", "target_qps":
		return true
	case "target_latency":
		return k.scenario != "Server"
	}
	return false
}

// intKeyMax returns the largest value of an integer key that Apply can
// store without wrapping: the ms → ns keys are multiplied by 10^6, and
// max_async_queries passes through LoadGen's 32-bit int.
func intKeyMax(k settingKey) uint64 {
	switch {
	case k.name == "max_async_queries":
		return math.MaxInt32
	case k.name == "ttft_latency" || k.name == "tpot_latency" || (k.name == "target_latency" && k.scenario == "Server"):
		return math.MaxUint64 / 1_000_000
	}
	return math.MaxUint64
}

// strictIntProblem says why value is refused for an integer setting read
// strictly, or returns "". A strict integer is a whole decimal number (or
// 0x hex), without sign, without a leading 0 (which LoadGen reads as octal),
// at most max.
func strictIntProblem(value string, max uint64) string {
	v, n, over := cStrtoullRange(value)
	switch {
	case strings.HasPrefix(value, "-"):
		return fmt.Sprintf("%s is negative (LoadGen's strtoull would wrap it to %d)", shorten(value), v)
	case strings.HasPrefix(value, "+"):
		return fmt.Sprintf("%s has a sign; write the number alone", shorten(value))
	case n < len(value):
		return fmt.Sprintf("%s is not a whole number: fractions and exponents are refused (LoadGen's strtoull would stop before %q and read %d)",
			shorten(value), shorten(value[n:]), v)
	case over:
		return fmt.Sprintf("%s is out of range: the largest value is %d (LoadGen's strtoull would saturate it)", shorten(value), max)
	case len(value) > 1 && value[0] == '0' && value[1]|0x20 != 'x':
		return fmt.Sprintf("%s has a leading 0, which LoadGen reads as octal (%d); write it without the 0", shorten(value), v)
	case v > max:
		return fmt.Sprintf("%s is out of range: the largest value is %d", shorten(value), max)
	}
	return ""
}

// CheckStrict checks the values that Apply(s, model, scenario, kind) would
// read from c against what their text says, for settings given where
// LoadGen's quirks are no excuse (aimeter's --set). An integer setting must be
// a whole non-negative decimal (or 0x hex) number without a leading 0 and in
// range: a negative value, a fraction, an exponent, or a value beyond
// 2^64-1 (beyond 2^64/10^6 for the ms → ns keys, beyond 2^31-1 for
// max_async_queries) is refused. A floating-point setting must be finite
// and, unless it is a zero, not so small that strtod reads 0.
// It returns nil or every problem, joined, each a *Error naming the key.
func (c *Config) CheckStrict(model string, scenario loadgen.Scenario, kind Kind) error {
	if model == "" || kind == AuditConf {
		model = "*"
	}
	var errs []error
	for _, k := range readKeys {
		if k.builtin && kind != BuiltinConf {
			continue
		}
		sc := scenario.String()
		if k.scenario != "" {
			sc = k.scenario
		}
		e, ok := c.Lookup(model, sc, k.name)
		if !ok {
			continue
		}
		var problem string
		if isFloatKey(k) {
			switch {
			case math.IsNaN(e.Float) || math.IsInf(e.Float, 0):
				problem = fmt.Sprintf("%s is not a finite number", shorten(e.Value))
			case floatReadingRemark(e) != "":
				problem = fmt.Sprintf("%s is below the range of a double (strtod would read 0)", shorten(e.Value))
			}
		} else {
			problem = strictIntProblem(e.Value, intKeyMax(k))
		}
		if problem != "" {
			errs = append(errs, &Error{File: c.Name, Line: e.Line, Key: e.Key, Msg: k.name + " = " + problem})
		}
	}
	return errors.Join(errs...)
}
