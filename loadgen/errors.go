package loadgen

import (
	"errors"
	"fmt"
	"strconv"
)

// DefaultErrorCategory is the category of a sample failure whose error does
// not say one (see CategoryError).
const DefaultErrorCategory = "sut"

// MaxErrorKinds bounds the error table of a Result: at most this many
// distinct (category, code) groups are kept, the last of them being the
// overflow entry that counts every failure beyond the first
// MaxErrorKinds−1 groups.
const MaxErrorKinds = 1024

// MaxErrorExamples is the most example messages an ErrorInfo keeps.
const MaxErrorExamples = 3

// maxErrorMessageLen bounds a stored message, in bytes.
const maxErrorMessageLen = 512

// exampleScan is how many failures of a group are looked at for distinct
// example messages: after that, a failure only counts, so that a long run
// of one kind of failure costs no message formatting.
const exampleScan = 256

// OverflowErrorCategory is the category of the overflow entry of the error
// table (see MaxErrorKinds).
const OverflowErrorCategory = "overflow"

// ErrorInfo is one group of sample failures: a category and a code (an HTTP
// status, a gRPC code; 0 for none), how many samples failed with them, a
// few of their messages and when the first and the last failed. A Result
// keeps one ErrorInfo per distinct (category, code, code name) and each
// Record an index into that table, so a run with a million failures of one
// kind stores one entry, not a million.
type ErrorInfo struct {
	// Category groups failures of one cause ("sut" by default; the network
	// adapters use the taxonomy of sut/netsut: "http_5xx",
	// "connection_reset", …); see CategoryError.
	Category string `json:"category"`
	// Code is the HTTP status or the gRPC code of the failures, 0 for none.
	Code int `json:"code,omitempty"`
	// CodeName names Code where a number alone does not (a gRPC code:
	// "ResourceExhausted").
	CodeName string `json:"code_name,omitempty"`
	// Message is the text of the group's first failure, cut to 512 bytes.
	Message string `json:"message"`
	// Examples are up to MaxErrorExamples distinct messages of the group,
	// Message first, each cut to 512 bytes. A table written before groups
	// had examples has none; Message is then the only one.
	Examples []string `json:"examples,omitempty"`
	// Count is the number of samples that failed in this group.
	Count uint64 `json:"count"`
	// FirstNs and LastNs are when the first and the last of them failed,
	// on the run's clock (Responder.Now: ns from the start of issuing of
	// the pass, as Record.CompletedNs). Both 0 in a table written before
	// groups kept times.
	FirstNs int64 `json:"first_ns,omitempty"`
	LastNs  int64 `json:"last_ns,omitempty"`
}

// Label names the group for people and scripts: the category, then the
// code name or the code where there is one ("http_5xx/503",
// "grpc/ResourceExhausted", "connection_reset").
func (e ErrorInfo) Label() string {
	switch {
	case e.CodeName != "":
		return e.Category + "/" + e.CodeName
	case e.Code != 0:
		return e.Category + "/" + strconv.Itoa(e.Code)
	}
	return e.Category
}

// Messages returns the example messages of the group: Examples, or Message
// alone in a table that has none.
func (e ErrorInfo) Messages() []string {
	if len(e.Examples) > 0 {
		return e.Examples
	}
	if e.Message != "" {
		return []string{e.Message}
	}
	return nil
}

// CategoryError gives an error a category (and a code) for the error table
// of the Result. Any error in the chain of a Response.Err that has a method
// Category() string sets the category, and one with a method
// ErrorCode() (int, string) the code and its name; CategoryError is the
// ready-made one.
type CategoryError struct {
	// Kind is the category, e.g. "http_5xx" or "malformed_json".
	Kind string
	// Code is an HTTP status or a gRPC code (0: none); CodeName its name
	// where the number does not say it ("Unavailable").
	Code     int
	CodeName string
	// Err is the failure itself; its message is the one stored.
	Err error
}

// WithCategory returns err with the given category (nil if err is nil).
func WithCategory(category string, err error) error {
	if err == nil {
		return nil
	}
	return &CategoryError{Kind: category, Err: err}
}

// WithCode returns err with the given category, code and code name (nil if
// err is nil). Failures group by category and code.
func WithCode(category string, code int, name string, err error) error {
	if err == nil {
		return nil
	}
	return &CategoryError{Kind: category, Code: code, CodeName: name, Err: err}
}

// Error returns the message of the wrapped error.
func (e *CategoryError) Error() string {
	if e.Err == nil {
		return e.Kind
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *CategoryError) Unwrap() error { return e.Err }

// Category returns the category.
func (e *CategoryError) Category() string { return e.Kind }

// ErrorCode returns the code and its name.
func (e *CategoryError) ErrorCode() (int, string) { return e.Code, e.CodeName }

type errorKey struct {
	category string
	code     int
	name     string
}

// errorKeyOf returns the group of err: the category (and code) of the first
// error in its chain with a Category method, else DefaultErrorCategory. It
// walks the chain with type assertions, not errors.As, so that it does not
// allocate.
func errorKeyOf(err error) errorKey {
	for e := err; e != nil; {
		if c, ok := e.(interface{ Category() string }); ok {
			if k := c.Category(); k != "" {
				key := errorKey{category: k}
				if cc, ok := e.(interface{ ErrorCode() (int, string) }); ok {
					key.code, key.name = cc.ErrorCode()
				}
				return key
			}
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			e = u.Unwrap()
		case interface{ Unwrap() []error }:
			// A joined error: errors.As searches the tree depth first.
			var c interface{ Category() string }
			if errors.As(e, &c) && c.Category() != "" {
				key := errorKey{category: c.Category()}
				if cc, ok := c.(interface{ ErrorCode() (int, string) }); ok {
					key.code, key.name = cc.ErrorCode()
				}
				return key
			}
			e = nil
		default:
			e = nil
		}
	}
	return errorKey{category: DefaultErrorCategory}
}

// errorMessage returns the stored message of err, cut to maxErrorMessageLen
// bytes on a UTF-8 boundary.
func errorMessage(err error) string {
	if err == nil {
		return "failure reported without an error"
	}
	m := err.Error()
	if len(m) <= maxErrorMessageLen {
		return m
	}
	cut := maxErrorMessageLen
	for cut > 0 && m[cut]&0xC0 == 0x80 {
		cut--
	}
	return m[:cut] + "…"
}

// errorTable is the table of sample failures of one run, grouped by
// category and code. Its indices are 1-based (0 in a record means "no
// error"). The Responder guards it with its mutex.
type errorTable struct {
	index map[errorKey]uint16
	list  []ErrorInfo
}

// add counts one failure with err at time at (the run's clock) and returns
// the 1-based index of its group. A failure of a group already seen
// allocates nothing.
func (t *errorTable) add(err error, at int64) uint16 {
	k := errorKeyOf(err)
	if i, ok := t.index[k]; ok {
		e := &t.list[i-1]
		e.Count++
		e.FirstNs, e.LastNs = min(e.FirstNs, at), max(e.LastNs, at)
		if len(e.Examples) < MaxErrorExamples && e.Count <= exampleScan {
			if m := errorMessage(err); !contains(e.Examples, m) {
				e.Examples = append(e.Examples, m)
			}
		}
		return i
	}
	if len(t.list) >= MaxErrorKinds-1 {
		if len(t.list) == MaxErrorKinds-1 {
			t.list = append(t.list, ErrorInfo{
				Category: OverflowErrorCategory,
				Message:  fmt.Sprintf("failures of more than %d distinct kinds; the rest are counted here", MaxErrorKinds-1),
				FirstNs:  at,
				LastNs:   at,
			})
			o := &t.list[MaxErrorKinds-1]
			o.Examples = []string{o.Message}
		}
		o := &t.list[MaxErrorKinds-1]
		o.Count++
		o.FirstNs, o.LastNs = min(o.FirstNs, at), max(o.LastNs, at)
		return MaxErrorKinds
	}
	if t.index == nil {
		t.index = make(map[errorKey]uint16)
	}
	m := errorMessage(err)
	t.list = append(t.list, ErrorInfo{
		Category: k.category, Code: k.code, CodeName: k.name,
		Message: m, Examples: []string{m}, Count: 1, FirstNs: at, LastNs: at,
	})
	i := uint16(len(t.list))
	t.index[k] = i
	return i
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ErrorOf returns the failure group of rec from the error table of r, and
// false when rec has none (Record.Error == 0) or its index is out of range.
func (r *Result) ErrorOf(rec Record) (ErrorInfo, bool) {
	if rec.Error == 0 || int(rec.Error) > len(r.Errors) {
		return ErrorInfo{}, false
	}
	return r.Errors[rec.Error-1], true
}
