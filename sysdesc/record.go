package sysdesc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"aimeter/bundle"
)

// File is the bundle's part that holds the system description and the
// run's declared division (system_desc.json).
const File = "system_desc.json"

// DiagramBase is the name of the diagram's file in a bundle, before its
// extension ("system_diagram.png", "system_diagram.pdf").
const DiagramBase = "system_diagram"

// MaxDiagramBytes is the largest diagram Load takes (64 MiB).
const MaxDiagramBytes = 64 << 20

// Record is what a run bundle stores of its system description: the
// division the run was declared for, the description as validated, the
// file it came from and the diagram, hashed. A run with neither a division
// nor a description has none.
type Record struct {
	// Division is the MLPerf division the result is for ("closed",
	// "open", "network"); "" when not declared.
	Division string `json:"division,omitempty"`
	// Source is the description's file as given; nil for none.
	Source *Source `json:"source,omitempty"`
	// Description is the validated description; nil when the run had
	// none (a network-division result without one fails aimeter check).
	Description *Description `json:"description,omitempty"`
	// Diagram is the system diagram the bundle carries beside this file;
	// nil for none.
	Diagram *Diagram `json:"diagram,omitempty"`
}

// Source is a file the user gave, as the bundle records it.
type Source struct {
	// Name is the file's name as given (its base name: the path of the
	// machine that ran the test is not kept).
	Name string `json:"name"`
	// Bytes and SHA256 are its size and digest.
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Diagram is the system diagram (any image or PDF) a bundle carries.
type Diagram struct {
	// File is its name in the bundle, DiagramBase and the extension of
	// its type: "system_diagram.png".
	File string `json:"file"`
	// Source is the file as given.
	Source Source `json:"source"`
	// MediaType is its type as sniffed from its bytes: "image/png",
	// "image/jpeg", "image/gif", "image/webp", "image/bmp",
	// "image/svg+xml" or "application/pdf".
	MediaType string `json:"media_type"`
	// Data are its bytes; not in system_desc.json but in File.
	Data []byte `json:"-"`
}

// mediaExt are the diagram types taken, with their file extension.
var mediaExt = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/bmp": ".bmp",
	"image/svg+xml": ".svg", "application/pdf": ".pdf",
}

// diagramFileRE is what a diagram's File may be: no path, only the name.
var diagramFileRE = regexp.MustCompile(`^` + DiagramBase + `\.(png|jpg|gif|webp|bmp|svg|pdf)$`)

// sniff returns the media type of a diagram's bytes, or an error saying it
// is no image or PDF.
func sniff(data []byte) (string, error) {
	t := http.DetectContentType(data)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	if _, ok := mediaExt[t]; ok {
		return t, nil
	}
	head := data[:min(len(data), 1024)]
	if (strings.HasPrefix(t, "text/xml") || strings.HasPrefix(t, "text/plain")) && bytes.Contains(head, []byte("<svg")) {
		return "image/svg+xml", nil
	}
	return "", fmt.Errorf("its content is %s, not an image (PNG, JPEG, GIF, WebP, BMP, SVG) or a PDF", t)
}

// NewDiagram makes the Diagram of a file's bytes; name is the file as
// given.
func NewDiagram(name string, data []byte) (*Diagram, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%s is empty", name)
	}
	if len(data) > MaxDiagramBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than %d", name, len(data), MaxDiagramBytes)
	}
	mt, err := sniff(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Diagram{File: DiagramBase + mediaExt[mt], Source: sourceOf(name, data), MediaType: mt, Data: data}, nil
}

func sourceOf(name string, data []byte) Source {
	sum := sha256.Sum256(data)
	return Source{Name: filepath.Base(name), Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

// Load reads a description file (JSON or YAML), validates it and reads
// its diagram, a path relative to the file's directory. Errors name the
// file and the field.
func Load(path string) (*Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	src := sourceOf(path, data)
	rec := &Record{Division: d.Division, Source: &src, Description: d}
	if d.Diagram != "" {
		p := d.Diagram
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		img, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, fieldErr("diagram", "%v", err))
		}
		if rec.Diagram, err = NewDiagram(d.Diagram, img); err != nil {
			return nil, fmt.Errorf("%s: %w", path, fieldErr("diagram", "%v", err))
		}
	}
	return rec, rec.check()
}

// check refuses a network-division description without a diagram.
func (r *Record) check() error {
	if r.Division == "network" && r.Description != nil && r.Diagram == nil {
		name := ""
		if r.Source != nil {
			name = r.Source.Name + ": "
		}
		return fmt.Errorf("%s%w", name, fieldErr("diagram", "missing: the network division needs a system diagram (an image or PDF) showing how the LoadGen node and the SUT nodes are connected"))
	}
	return nil
}

// Declare sets the division the run is declared for (aimeter run
// --division); "" keeps the description's. A description written for
// another division contradicts it: the error names the field.
func (r *Record) Declare(division string) error {
	if division == "" {
		return nil
	}
	if !slices.Contains(Divisions, division) {
		return fmt.Errorf("division %q: want one of %s", division, strings.Join(Divisions, ", "))
	}
	if r.Description != nil && r.Description.Division != "" && r.Description.Division != division {
		return fieldErr("division", "the description is for the %s division, the run is declared for the %s division", r.Description.Division, division)
	}
	r.Division = division
	return r.check()
}

// Problems are what keeps the record from being a network-division
// result's: no description, no diagram. None for another division.
func (r *Record) Problems() []string {
	if r == nil || r.Division != "network" {
		return nil
	}
	var out []string
	if r.Description == nil {
		out = append(out, "a network-division result without a system description (aimeter run --system-desc FILE): MLPerf asks for the network interfaces of the SUT nodes and of every component between them, the fabric and protocol (OSI layers 1 to 4) and the data path")
	}
	if r.Diagram == nil {
		out = append(out, "a network-division result without a system diagram (the description's diagram): MLPerf asks for one showing how the LoadGen node and the SUT nodes are connected")
	}
	return out
}

// Part is the record as a part of a bundle: system_desc.json, and the
// diagram's file beside it.
var Part = bundle.FileSetType[*Record]{Name: File, Read: readPart, Write: writePart}

// Of returns the record of b; nil for a bundle without one (or a
// malformed one, which derived.Read reports).
func Of(b *bundle.Bundle) *Record { return Part.Value(b) }

// Set makes r the record of b; nil removes it.
func Set(b *bundle.Bundle, r *Record) {
	if r == nil {
		Part.Remove(b)
		return
	}
	Part.Set(b, r)
}

func writePart(_ *bundle.Bundle, r *Record, fw bundle.FileWriter) error {
	fw.Add(File, func(w io.Writer) error { return bundle.WriteJSON(w, r) })
	if r.Diagram != nil {
		if !diagramFileRE.MatchString(r.Diagram.File) {
			return fmt.Errorf("%s: diagram.file %q: want %s with an image's or PDF's extension", File, r.Diagram.File, DiagramBase)
		}
		data := r.Diagram.Data
		fw.Add(r.Diagram.File, func(w io.Writer) error { _, err := w.Write(data); return err })
	}
	return nil
}

// ReadRecord decodes system_desc.json alone (the diagram's bytes are not
// in it); an unknown field is an error.
func ReadRecord(rd io.Reader) (*Record, error) {
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if r.Division != "" && !slices.Contains(Divisions, r.Division) {
		return nil, fmt.Errorf("division %q: want one of %s", r.Division, strings.Join(Divisions, ", "))
	}
	if r.Description != nil {
		if err := r.Description.Validate(); err != nil {
			return nil, fmt.Errorf("description.%w", err)
		}
	}
	return &r, nil
}

func readPart(_ *bundle.Bundle, f bundle.Files) (*Record, error) {
	data, _ := f.Bytes(File)
	r, err := ReadRecord(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if d := r.Diagram; d != nil {
		if !diagramFileRE.MatchString(d.File) {
			return nil, fmt.Errorf("diagram.file %q: want %s with an image's or PDF's extension", d.File, DiagramBase)
		}
		img, ok := f.Bytes(d.File)
		if !ok {
			return nil, fmt.Errorf("diagram.file %s: not in the bundle", d.File)
		}
		sum := sha256.Sum256(img)
		if got := hex.EncodeToString(sum[:]); got != d.Source.SHA256 || int64(len(img)) != d.Source.Bytes {
			return nil, fmt.Errorf("diagram.file %s: %d bytes, sha256 %s; the record says %d bytes, sha256 %s", d.File, len(img), got, d.Source.Bytes, d.Source.SHA256)
		}
		d.Data = img
	}
	return r, nil
}
