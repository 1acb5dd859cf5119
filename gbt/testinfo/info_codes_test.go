package testinfo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// The table of a coded field drives every method: a code beyond the table
// is invalid everywhere, and each field keeps its own table.
func TestCodedOutOfRange(t *testing.T) {
	tests := []struct {
		why       string
		v         interface{ Valid() bool }
		valid     bool
		str       string
		marshalOK bool
	}{
		{"not given is valid and marshals as null", TestMode(0), true, "unset", true},
		{"the last code of a two-code field", TestOpen, true, "open", true},
		{"one past the two codes of TestMode", TestMode(3), false, "test mode(2)", false},
		{"the last of Topology's five codes", TopologyOther, true, "other", true},
		{"one past Topology's codes", Topology(6), false, "node topology(5)", false},
		{"CardType has three codes", CardTrainingAndInference, true, "training and inference", true},
		{"Flag has two codes; 2 is beyond them", Flag(3), false, "flag(2)", false},
	}
	for _, tc := range tests {
		if got := tc.v.Valid(); got != tc.valid {
			t.Errorf("%s: Valid = %v, want %v", tc.why, got, tc.valid)
		}
		if got := tc.v.(interface{ String() string }).String(); got != tc.str {
			t.Errorf("%s: String = %q, want %q", tc.why, got, tc.str)
		}
		if _, err := json.Marshal(tc.v); (err == nil) != tc.marshalOK {
			t.Errorf("%s: Marshal error %v, want ok = %v", tc.why, err, tc.marshalOK)
		}
	}
}

// Names are looked up in the field's own table: "ring" is a topology, not a
// test mode, and the error lists the field's codes.
func TestCodedFieldsKeepTheirTables(t *testing.T) {
	var tp Topology
	if err := json.Unmarshal([]byte(`"ring"`), &tp); err != nil || tp != TopologyRing {
		t.Errorf("topology ring: %v %v", tp, err)
	}
	var m TestMode
	err := json.Unmarshal([]byte(`"ring"`), &m)
	if err == nil || !strings.Contains(err.Error(), "invalid test mode \"ring\" (want 0 = closed, 1 = open)") {
		t.Errorf("test mode ring: %v", err)
	}
	var ct struct {
		C CardType `yaml:"c"`
	}
	if err := yaml.Unmarshal([]byte("c: both\n"), &ct); err != nil || ct.C != CardTrainingAndInference {
		t.Errorf("card type both: %v %v", ct.C, err)
	}
	if err := yaml.Unmarshal([]byte("c: 3\n"), &ct); err == nil || !strings.Contains(err.Error(), "1:4: invalid accelerator card type 3") {
		t.Errorf("card type 3: %v", err)
	}
}
