package compliance

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"aimeter/bundle"
	"aimeter/loadgen"
)

// ReadAccuracyLog reads an mlperf_log_accuracy.json. Where an
// mlperf_log_detail.txt lies beside it, every qsl_idx must also be below
// its qsl_reported_total_count. An error names the file, the entry (its
// position, and its seq_id where read) and what is wrong with it: a
// truncated or malformed log, hex that does not decode, an index outside
// the data set.
func ReadAccuracyLog(path string) ([]loadgen.AccuracyEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := bundle.ReadAccuracyLog(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if d, err := readDetail(filepath.Join(filepath.Dir(path), "mlperf_log_detail.txt")); err == nil {
		if total, err := strconv.ParseUint(d.str("qsl_reported_total_count"), 10, 64); err == nil {
			for i, e := range entries {
				if e.QSLIndex >= total {
					return nil, fmt.Errorf("%s: accuracy log entry %d (seq_id %d): qsl_idx %d is outside the data set of %d samples (qsl_reported_total_count of the detail log)",
						path, i, e.SeqID, e.QSLIndex, total)
				}
			}
		}
	}
	return entries, nil
}

// dtypeSize is the size in bytes of a value of dtype, as the scripts'
// --dtype names it.
func dtypeSize(dtype string) (int, error) {
	switch dtype {
	case "byte":
		return 1, nil
	case "int16":
		return 2, nil
	case "int32", "float32":
		return 4, nil
	case "int64":
		return 8, nil
	}
	return 0, fmt.Errorf("unknown dtype %q (want byte, int16, int32, int64 or float32)", dtype)
}

// values decodes data as little-endian values of dtype (as numpy's
// frombuffer on a little-endian machine), as float64s for comparison
// (every int32 and int16 exactly; int64 exactly up to 2^53). what names the
// entry for the error of a length that is no whole number of values.
func values(data []byte, dtype string, what func() string) ([]float64, error) {
	size, err := dtypeSize(dtype)
	if err != nil {
		return nil, err
	}
	if len(data)%size != 0 {
		return nil, fmt.Errorf("%s: %d bytes (%d hex digits) of data, not a whole number of %s values of %d bytes", what(), len(data), 2*len(data), dtype, size)
	}
	v := make([]float64, len(data)/size)
	for i := range v {
		b := data[i*size:]
		switch dtype {
		case "byte":
			v[i] = float64(int8(b[0]))
		case "int16":
			v[i] = float64(int16(binary.LittleEndian.Uint16(b)))
		case "int32":
			v[i] = float64(int32(binary.LittleEndian.Uint32(b)))
		case "float32":
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case "int64":
			v[i] = float64(int64(binary.LittleEndian.Uint64(b)))
		}
	}
	return v, nil
}

func entryName(path string, i int, e loadgen.AccuracyEntry) func() string {
	return func() string {
		return fmt.Sprintf("%s: accuracy log entry %d (seq_id %d, qsl_idx %d)", path, i, e.SeqID, e.QSLIndex)
	}
}

// writeAccuracyLog writes entries as an mlperf_log_accuracy.json, one entry
// a line as LoadGen does (the baseline of TEST01's fallback).
func writeAccuracyLog(entries []loadgen.AccuracyEntry) string {
	var b []byte
	b = append(b, "[\n"...)
	for i, e := range entries {
		line, _ := json.Marshal(map[string]any{"seq_id": e.SeqID, "qsl_idx": e.QSLIndex, "data": fmt.Sprintf("%X", e.Data)})
		b = append(b, line...)
		if i < len(entries)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, "]\n"...)
	return string(b)
}
