package bundle

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"aimeter/loadgen"
)

// TestErrorsJSONOldAndNew: errors.json written before failures were
// grouped (category and message only) still reads; the new fields go out
// and come back.
func TestErrorsJSONOldAndNew(t *testing.T) {
	old := `[
  {"category": "http", "message": "POST x: HTTP 503", "count": 2},
  {"category": "reset", "message": "read: connection reset", "count": 1}
]`
	table, err := readErrors(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 2 || table[0].Count != 2 || table[0].Code != 0 || table[0].Messages()[0] != "POST x: HTTP 503" {
		t.Errorf("old table read as %+v", table)
	}
	groups := []loadgen.ErrorInfo{
		{Category: "http_5xx", Code: 501, Message: "a", Examples: []string{"a", "b"}, Count: 20, FirstNs: 5, LastNs: 90},
		{Category: "grpc", Code: 14, CodeName: "Unavailable", Message: "c", Examples: []string{"c"}, Count: 1, FirstNs: 7, LastNs: 7},
	}
	var buf bytes.Buffer
	if err := writeErrors(&buf, groups); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"code": 501`, `"code_name": "Unavailable"`, `"examples"`, `"first_ns": 5`, `"last_ns": 90`} {
		if !strings.Contains(buf.String(), field) {
			t.Errorf("errors.json lacks %s:\n%s", field, buf.String())
		}
	}
	back, err := readErrors(&buf)
	if err != nil || !reflect.DeepEqual(back, groups) {
		t.Errorf("read back %+v, %v", back, err)
	}
}
