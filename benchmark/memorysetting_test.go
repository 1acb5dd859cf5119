package benchmark

import "testing"

func TestMemorySetting(t *testing.T) {
	tests := []struct {
		in     string
		want   int64 // 0: refused
		reason string
	}{
		{"4GiB", 4 << 30, "binary unit"},
		{"500MB", 500e6, "decimal unit"},
		{"1.5G", 3 << 29, "a bare letter is binary"},
		{"123456", 123456, "plain bytes"},
		{"none", -1, "no limit"},
		{"0", 0, "refused: a zero budget refuses everything"},
		{"-1GB", 0, "refused: negative"},
		{"lots", 0, "refused: not a size"},
		{"1e30TB", 0, "refused: out of range"},
	}
	for _, tc := range tests {
		var m MemorySetting
		err := m.Set(tc.in)
		if tc.want == 0 {
			if err == nil {
				t.Errorf("%s: %q accepted as %d", tc.reason, tc.in, m.bytes)
			}
			continue
		}
		b, berr := m.Budget("--max-memory")
		if err != nil || berr != nil || b.Bytes != tc.want || b.Source != "--max-memory" {
			t.Errorf("%s: %q gives %+v, %v, %v; want %d from --max-memory", tc.reason, tc.in, b, err, berr, tc.want)
		}
	}
	var four MemorySetting
	if err := four.Set("4GiB"); err != nil {
		t.Fatal(err)
	}
	if b, err := four.Budget("x"); err != nil || b.GoLimit != 5<<30 {
		t.Errorf("4GiB sets Go's soft limit to %d, %v; want 5/4 of it", b.GoLimit, err)
	}
	var auto MemorySetting
	if auto.String() != "auto" || four.String() != "4294967296" {
		t.Errorf("the unset setting shows %q, 4GiB %q; want auto and its bytes", auto.String(), four.String())
	}
	if err := four.Set("auto"); err != nil || four != auto {
		t.Errorf("auto after a size: %+v, %v; want the zero setting", four, err)
	}
}
