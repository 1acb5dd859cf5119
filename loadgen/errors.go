package loadgen

import (
	"errors"
	"fmt"
)

// DefaultErrorCategory is the category of a sample failure whose error does
// not say one (see CategoryError).
const DefaultErrorCategory = "sut"

// MaxErrorKinds bounds the error table of a Result: at most this many
// distinct (category, message) pairs are kept, the last of them being the
// overflow entry that counts every failure beyond the first
// MaxErrorKinds−1 kinds.
const MaxErrorKinds = 1024

// maxErrorMessageLen bounds the stored message of one error kind, in bytes.
const maxErrorMessageLen = 512

// OverflowErrorCategory is the category of the overflow entry of the error
// table (see MaxErrorKinds).
const OverflowErrorCategory = "overflow"

// ErrorInfo is one kind of sample failure: a category, a message and how
// many samples failed with exactly this pair. A Result keeps one ErrorInfo
// per distinct pair and each Record an index into that table, so a run with
// a million failures of one kind stores one string, not a million.
type ErrorInfo struct {
	// Category groups failures of one cause ("sut" by default; a SUT adapter
	// may say e.g. "http", "timeout-server", "decode"); see CategoryError.
	Category string `json:"category"`
	// Message is the error's text, cut to 512 bytes.
	Message string `json:"message"`
	// Count is the number of samples that failed with this pair.
	Count uint64 `json:"count"`
}

// CategoryError gives an error a category for the error table of the
// Result. Any error in the chain of a Response.Err (as errors.As finds it)
// that has a method Category() string sets the category; CategoryError is
// the ready-made one.
type CategoryError struct {
	// Kind is the category, e.g. "http" or "decode".
	Kind string
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

// errorCategory returns the category of err: that of the first error in its
// chain with a Category method, or DefaultErrorCategory.
func errorCategory(err error) string {
	var c interface{ Category() string }
	if err != nil && errors.As(err, &c) {
		if k := c.Category(); k != "" {
			return k
		}
	}
	return DefaultErrorCategory
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

type errorKey struct{ category, message string }

// errorTable is the deduplicated table of sample failures of one run. Its
// indices are 1-based (0 in a record means "no error"). The Responder
// guards it with its mutex.
type errorTable struct {
	index map[errorKey]uint16
	list  []ErrorInfo
}

// add counts one failure with err and returns its 1-based index.
func (t *errorTable) add(err error) uint16 {
	k := errorKey{errorCategory(err), errorMessage(err)}
	if i, ok := t.index[k]; ok {
		t.list[i-1].Count++
		return i
	}
	if len(t.list) >= MaxErrorKinds-1 {
		if len(t.list) == MaxErrorKinds-1 {
			t.list = append(t.list, ErrorInfo{
				Category: OverflowErrorCategory,
				Message:  fmt.Sprintf("failures of more than %d distinct kinds; the rest are counted here", MaxErrorKinds-1),
			})
		}
		t.list[MaxErrorKinds-1].Count++
		return MaxErrorKinds
	}
	if t.index == nil {
		t.index = make(map[errorKey]uint16)
	}
	t.list = append(t.list, ErrorInfo{Category: k.category, Message: k.message, Count: 1})
	i := uint16(len(t.list))
	t.index[k] = i
	return i
}

// ErrorOf returns the failure of rec from the error table of r, and false
// when rec has none (Record.Error == 0) or its index is out of range.
func (r *Result) ErrorOf(rec Record) (ErrorInfo, bool) {
	if rec.Error == 0 || int(rec.Error) > len(r.Errors) {
		return ErrorInfo{}, false
	}
	return r.Errors[rec.Error-1], true
}
