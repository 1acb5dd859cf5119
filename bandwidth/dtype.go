package bandwidth

import (
	"fmt"
	"strings"
)

// dtypeSizes are the data types a declaration may name, with their size
// in bytes; KServe v2's names (FP32, INT64, …) and NumPy's (float32,
// int64, …) both read.
var dtypeSizes = map[string]int{
	"bool": 1, "int8": 1, "uint8": 1, "fp8": 1,
	"int16": 2, "uint16": 2, "fp16": 2, "bf16": 2, "float16": 2, "bfloat16": 2,
	"int32": 4, "uint32": 4, "fp32": 4, "float32": 4,
	"int64": 8, "uint64": 8, "fp64": 8, "float64": 8,
}

// DTypeSize returns the size in bytes of a data type name (FP32, int8,
// bf16, …; case-insensitive), or an error naming it.
func DTypeSize(name string) (int, error) {
	if n, ok := dtypeSizes[strings.ToLower(strings.TrimSpace(name))]; ok {
		return n, nil
	}
	return 0, fmt.Errorf("data type %q: want one of bool, int8, uint8, fp8, int16, uint16, fp16, bf16, int32, uint32, fp32, int64, uint64, fp64", name)
}

// DTypes are the declared data types of a benchmark's tensors on the
// wire, by size in bytes; 0 means not declared.
type DTypes struct {
	// Input is the size of an input element (dtype_size); for DLRMv2 the
	// numerical inputs' (dtype_size1).
	Input int `json:"input_bytes,omitempty"`
	// Input2 is DLRMv2's categorical inputs' size (dtype_size2); 0 means
	// Input's.
	Input2 int `json:"input2_bytes,omitempty"`
	// Output is the size of an output element (3D U-Net's and SDXL's
	// egress); 0 means Input's.
	Output int `json:"output_bytes,omitempty"`
	// Names are the declaration as given ("fp32", "fp32,int32"), for the
	// record.
	Names string `json:"names,omitempty"`
}

// ParseDTypes reads a declaration of input data types: one name (fp32),
// or for DLRMv2 two separated by a comma, the numerical inputs' then the
// categorical inputs' (fp16,int32). out, if not empty, is the output's
// data type. An error names the part it refuses.
func ParseDTypes(in, out string) (DTypes, error) {
	var d DTypes
	in = strings.TrimSpace(in)
	if in != "" {
		parts := strings.Split(in, ",")
		if len(parts) > 2 {
			return DTypes{}, fmt.Errorf("input data types %q: want one data type, or two separated by a comma (DLRMv2's numerical and categorical inputs)", in)
		}
		var err error
		if d.Input, err = DTypeSize(parts[0]); err != nil {
			return DTypes{}, err
		}
		if len(parts) == 2 {
			if d.Input2, err = DTypeSize(parts[1]); err != nil {
				return DTypes{}, err
			}
		}
		d.Names = in
	}
	if out = strings.TrimSpace(out); out != "" {
		n, err := DTypeSize(out)
		if err != nil {
			return DTypes{}, err
		}
		d.Output = n
		if d.Names != "" {
			d.Names += " → "
		} else {
			d.Names = "→ "
		}
		d.Names += out
	}
	return d, nil
}

func (d DTypes) input2() int {
	if d.Input2 > 0 {
		return d.Input2
	}
	return d.Input
}

func (d DTypes) output() int {
	if d.Output > 0 {
		return d.Output
	}
	return d.Input
}
