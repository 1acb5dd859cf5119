package parquet

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// A pqTable is one of the Parquet files aimeter writes with its own page
// writer (pqEncoder) and reads with its own decoder (pqDecoder):
// records.parquet and, from format version 3, stages.parquet,
// samples.parquet and tokens.parquet. Inside the encoder and decoder
// every column is a []int64: unsigned values as their bits, a null of an
// optional column as loadgen.NoTime, and an enumerated string column as
// the index of its value in pqColumn.enum.
type pqTable struct {
	file   string // the file's name in a bundle, for errors
	schema *parquet.Schema
	cols   []pqColumn
	// template is the footer of the file with no row group: its schema
	// elements, column orders and created_by.
	template func() (*format.FileMetaData, error)
}

// pqKind is how a column is stored.
type pqKind uint8

const (
	pqInt64 pqKind = iota // INT64, DELTA_BINARY_PACKED
	pqInt32               // INT32, DELTA_BINARY_PACKED
	pqEnum                // BYTE_ARRAY (STRING), PLAIN: one of pqColumn.enum
)

// pqColumn is one column of a pqTable.
type pqColumn struct {
	name     string
	kind     pqKind
	unsigned bool     // UINT_64 or UINT_32: statistics compare unsigned
	optional bool     // nulls allowed (pqInt64 only), loadgen.NoTime in memory
	enum     []string // pqEnum: the values, in the order of their codes
}

// newPQTable describes the file whose schema is that of model (a struct
// with parquet tags), with enums giving the values of its string columns.
// Its template footer is the library's for an empty file of that schema.
func newPQTable(file string, model any, enums map[string][]string) *pqTable {
	t := &pqTable{file: file, schema: parquet.SchemaOf(model)}
	for _, leaf := range t.schema.Columns() {
		n, _ := t.schema.Lookup(leaf...)
		typ := n.Node.Type()
		c := pqColumn{name: leaf[0], optional: n.Node.Optional()}
		switch typ.Kind() {
		case parquet.Int64:
			c.kind = pqInt64
		case parquet.Int32:
			c.kind = pqInt32
		case parquet.ByteArray:
			c.kind, c.enum = pqEnum, enums[c.name]
			if len(c.enum) == 0 {
				panic("bundle: string column " + c.name + " without its values")
			}
		default:
			panic(fmt.Sprintf("bundle: column %s of type %v", c.name, typ))
		}
		if lt := typ.LogicalType(); lt != nil {
			if it, ok := lt.Value.(*format.IntType); ok && !it.IsSigned {
				c.unsigned = true
			}
		}
		if c.optional && c.kind != pqInt64 {
			panic("bundle: optional column " + c.name + " is not INT64")
		}
		t.cols = append(t.cols, c)
	}
	schema := t.schema
	t.template = sync.OnceValues(func() (*format.FileMetaData, error) {
		var buf bytes.Buffer
		w := parquet.NewWriter(&buf, schema, parquet.CreatedBy("aimeter", "", ""))
		if err := w.Close(); err != nil {
			return nil, err
		}
		f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			return nil, err
		}
		md := *f.Metadata()
		if len(md.Schema) != len(t.cols)+1 {
			return nil, fmt.Errorf("%s schema has %d elements, want %d", file, len(md.Schema), len(t.cols)+1)
		}
		return &md, nil
	})
	return t
}

// columnName is the name of column c, or its number past the schema's.
func (t *pqTable) columnName(c int) string {
	if c >= 0 && c < len(t.cols) {
		return t.cols[c].name
	}
	return fmt.Sprint(c)
}
