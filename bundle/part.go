package bundle

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Raw parts that packages above this one define.
//
// A bundle's own raw files (settings, run, events, records, accuracy log,
// stage times, sample data, errors, token times, server metrics) are read
// and written here. The others belong to the packages that define them —
// gbt_test.json to gbt, telemetry.json to telemetry, invocation.json to
// benchmark/invocation, a training run's files to train/trainbundle — so
// that the arrows run from them to this package, never back: each declares
// its part as a value (a PartType or a FileSetType) with accessors of its
// own (gbt.TestOf, gbt.SetTest, …).
//
// Read keeps the bytes of every raw file it does not read itself; a part
// is decoded from them the first time it is asked for, and kept decoded.
// A part that is set is written from its value; one never decoded is
// written back as it was read, byte for byte, so that a bundle carries
// parts this aimeter does not know, and the manifest covers them all.
// Package derived lists every known part (derived.Parts) and checks them
// on its read path (derived.Read), so that a malformed part is an error
// there, naming its file.

// Part is a raw part of a bundle of a type a package above this one
// defines; PartType and FileSetType are Parts. ReadOptions.Parts are
// checked by ReadWith.
type Part interface {
	// PartName is the part's file (its main file, for a part of several).
	PartName() string
	// Check decodes the part of b, when b has it, and returns the error
	// that gives, naming the file.
	Check(b *Bundle) error
}

// PartType is a raw part held in one file: its name and how to read and
// write it. T is usually a pointer, so that changes to the value Get
// returns are written.
type PartType[T any] struct {
	// Name is the part's file in the bundle, for example "gbt_test.json".
	Name string
	// Read decodes the file.
	Read func(r io.Reader) (T, error)
	// Write encodes v.
	Write func(w io.Writer, v T) error
}

// PartName returns p.Name.
func (p PartType[T]) PartName() string { return p.Name }

// Get returns the part of b: its value once set or decoded, else the value
// Read decodes from the bytes the bundle was read with. A bundle without
// the part gives the zero T and no error; a malformed part gives the zero
// T and the error, naming the file (asked again, the same error).
func (p PartType[T]) Get(b *Bundle) (T, error) {
	return getPart(b, p.Name, func(f Files) (T, error) {
		data, _ := f.Bytes(p.Name)
		return p.Read(bytes.NewReader(data))
	}, p.writer)
}

// Value is Get without the error: the zero T for a bundle without the part
// or with a malformed one (derived.Read reports the latter).
func (p PartType[T]) Value(b *Bundle) T { v, _ := p.Get(b); return v }

// Has reports whether b has the part, set or read.
func (p PartType[T]) Has(b *Bundle) bool { return hasPart(b, p.Name) }

// Set makes v the part of b, written by Write.
func (p PartType[T]) Set(b *Bundle, v T) { setPart(b, p.Name, v, p.writer) }

// Remove takes the part out of b: Write writes no file for it.
func (p PartType[T]) Remove(b *Bundle) { removePart(b, p.Name) }

// Check decodes the part of b, when b has it, and returns the error.
func (p PartType[T]) Check(b *Bundle) error { _, err := p.Get(b); return err }

func (p PartType[T]) writer(_ *Bundle, v T, fw FileWriter) error {
	fw.Add(p.Name, func(w io.Writer) error { return p.Write(w, v) })
	return nil
}

// FileSetType is a raw part held in several files, for example a training
// run's description, events and captured output. Its main file, Name, says
// whether a bundle has it.
type FileSetType[T any] struct {
	// Name is the part's main file.
	Name string
	// Read decodes the part from the bundle's raw files. It may also fill
	// the run-wide fields of b that the part describes (Version, System,
	// Location), as for a training bundle, which has no Result.
	Read func(b *Bundle, f Files) (T, error)
	// Write adds the part's files to fw. It runs before any file is
	// written, and may fill fields of v and b that are not set (defaults
	// such as the version and time zone).
	Write func(b *Bundle, v T, fw FileWriter) error
}

// PartName returns p.Name.
func (p FileSetType[T]) PartName() string { return p.Name }

// Get is PartType.Get for a part of several files.
func (p FileSetType[T]) Get(b *Bundle) (T, error) {
	return getPart(b, p.Name, func(f Files) (T, error) { return p.Read(b, f) }, p.Write)
}

// Value is Get without the error.
func (p FileSetType[T]) Value(b *Bundle) T { v, _ := p.Get(b); return v }

// Has reports whether b has the part, set or read.
func (p FileSetType[T]) Has(b *Bundle) bool { return hasPart(b, p.Name) }

// Set makes v the part of b, written by Write. The files of a part b was
// read with, which Read used, are no longer written as they were.
func (p FileSetType[T]) Set(b *Bundle, v T) { setPart(b, p.Name, v, p.Write) }

// Remove takes the part out of b, and with it the files Read used.
func (p FileSetType[T]) Remove(b *Bundle) { removePart(b, p.Name) }

// Check decodes the part of b, when b has it, and returns the error.
func (p FileSetType[T]) Check(b *Bundle) error { _, err := p.Get(b); return err }

// Files are the raw files a bundle was read with, as a part's Read sees
// them (names relative to the run: no "foreign/").
type Files struct {
	b    *Bundle
	used *[]string
}

// Bytes returns the bytes of the raw file name, and whether the bundle
// holds it. The file becomes the part's: it is written by the part's
// Write from then on, no longer as it was read.
func (f Files) Bytes(name string) ([]byte, bool) {
	data, ok := f.b.ps.raw[name]
	if ok && f.used != nil && !slices.Contains(*f.used, name) {
		*f.used = append(*f.used, name)
	}
	return data, ok
}

// FileWriter collects the files a part's Write adds.
type FileWriter struct {
	add func(name string, write func(io.Writer) error)
}

// Add adds the file name, written by write, to the bundle.
func (fw FileWriter) Add(name string, write func(io.Writer) error) { fw.add(name, write) }

// partSet holds a bundle's parts and the raw files kept for them.
type partSet struct {
	mu       sync.Mutex // guards decoding: derived files are written concurrently
	parts    map[string]*partValue
	raw      map[string][]byte
	rawOrder []string // the names of raw, in the order of the manifest read
}

// partValue is a part that was set or decoded.
type partValue struct {
	v     any
	err   error                                // Read's error: the raw bytes are written back as they were
	write func(b *Bundle, fw FileWriter) error // nil when err is set
	used  []string                             // the raw files Read used
}

// partSet returns b's parts, making them when b has none.
func (b *Bundle) partSet() *partSet {
	if b.ps == nil {
		b.ps = &partSet{parts: map[string]*partValue{}, raw: map[string][]byte{}}
	}
	return b.ps
}

func getPart[T any](b *Bundle, name string, read func(Files) (T, error), write func(*Bundle, T, FileWriter) error) (T, error) {
	var zero T
	if b == nil || b.ps == nil {
		return zero, nil
	}
	ps := b.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if pv := ps.parts[name]; pv != nil {
		if pv.err != nil {
			return zero, pv.err
		}
		return pv.v.(T), nil
	}
	if _, ok := ps.raw[name]; !ok {
		return zero, nil
	}
	var used []string
	v, err := read(Files{b: b, used: &used})
	if err != nil {
		if !strings.HasPrefix(err.Error(), name) { // name the file once
			err = fmt.Errorf("%s: %w", name, err)
		}
		ps.parts[name] = &partValue{err: err}
		return zero, err
	}
	ps.parts[name] = &partValue{v: v, write: func(b *Bundle, fw FileWriter) error { return write(b, v, fw) }, used: used}
	for _, u := range used {
		delete(ps.raw, u)
	}
	return v, nil
}

func hasPart(b *Bundle, name string) bool {
	if b == nil || b.ps == nil {
		return false
	}
	b.ps.mu.Lock()
	defer b.ps.mu.Unlock()
	if _, ok := b.ps.parts[name]; ok {
		return true
	}
	_, ok := b.ps.raw[name]
	return ok
}

// setPart makes v the part name of b. The raw files a part of that name
// was decoded from are dropped with it.
func setPart[T any](b *Bundle, name string, v T, write func(*Bundle, T, FileWriter) error) {
	removePart(b, name)
	ps := b.partSet()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.parts[name] = &partValue{v: v, write: func(b *Bundle, fw FileWriter) error { return write(b, v, fw) }}
}

// removePart takes the part name out of b, with the raw files it was
// decoded from.
func removePart(b *Bundle, name string) {
	if b.ps == nil {
		return
	}
	ps := b.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if old := ps.parts[name]; old != nil {
		for _, u := range old.used {
			delete(ps.raw, u)
		}
	}
	delete(ps.parts, name)
	delete(ps.raw, name)
}

// hasParts reports whether b has any part or kept raw file.
func (b *Bundle) hasParts() bool {
	return b.ps != nil && len(b.ps.parts)+len(b.ps.raw) > 0
}

// RawFile returns the bytes of a raw file that Read kept for a part (one
// this package does not read itself) and that is still written as it was
// read, and whether there is one.
func (b *Bundle) RawFile(name string) ([]byte, bool) {
	if b.ps == nil {
		return nil, false
	}
	b.ps.mu.Lock()
	defer b.ps.mu.Unlock()
	data, ok := b.ps.raw[name]
	return data, ok
}

// partOrder is where the raw parts of packages above this one go among a
// run's raw files, so that the manifest lists them in the order it always
// has: gbt_test.json, invocation.json and telemetry.json, then the server
// metrics, then the others.
func partOrder() []string { return []string{GBTTestFile, InvocationFile, TelemetryFile} }

// extraParts lists the files of b's parts and of the raw files it keeps,
// named with prefix before them: first those of partOrder, in that order;
// then the other files of parts (parts by name, each's files in the order
// its Write added them); then the raw files written as they were read, in
// the order of the manifest they were read from. It runs every part's
// Write, which may fill defaults in b.
func (b *Bundle) extraParts(prefix string) (first, rest []part, err error) {
	if b.ps == nil {
		return nil, nil, nil
	}
	ps := b.ps
	var files []part
	fw := FileWriter{add: func(name string, write func(io.Writer) error) {
		files = append(files, part{name, Raw, write})
	}}
	names := make([]string, 0, len(ps.parts))
	for name := range ps.parts {
		names = append(names, name)
	}
	slices.Sort(names)
	claimed := map[string]bool{}
	for _, name := range names {
		pv := ps.parts[name]
		for _, u := range pv.used {
			claimed[u] = true
		}
		if pv.err != nil {
			continue // written back as read, below
		}
		if err := pv.write(b, fw); err != nil {
			return nil, nil, fmt.Errorf("bundle: %s: %w", name, err)
		}
	}
	written := func(name string) bool {
		return slices.ContainsFunc(files, func(p part) bool { return p.name == name })
	}
	for _, name := range ps.rawOrder {
		data, ok := ps.raw[name]
		if !ok || claimed[name] || written(name) {
			continue
		}
		files = append(files, part{name, Raw, func(w io.Writer) error { _, err := w.Write(data); return err }})
	}
	for _, name := range partOrder() {
		if i := slices.IndexFunc(files, func(p part) bool { return p.name == name }); i >= 0 {
			first = append(first, part{prefix + name, Raw, files[i].write})
		}
	}
	for _, f := range files {
		if !slices.Contains(partOrder(), f.name) {
			rest = append(rest, part{prefix + f.name, Raw, f.write})
		}
	}
	return first, rest, nil
}

// keepRaw reads into b every raw file m lists under prefix that is not in
// own (the files this package read itself), nor in a foreign run.
func (b *Bundle) keepRaw(dir string, m *Manifest, prefix string, own []string) error {
	for _, e := range m.Files {
		if e.Role != Raw || !strings.HasPrefix(e.Name, prefix) {
			continue
		}
		name := strings.TrimPrefix(e.Name, prefix)
		if slices.Contains(own, name) || (prefix == "" && strings.HasPrefix(name, ForeignDir+"/")) {
			continue
		}
		if err := readFile(dir, e.Name, func(r io.Reader) error {
			data, err := io.ReadAll(r)
			if err == nil {
				ps := b.partSet()
				ps.raw[name] = data
				ps.rawOrder = append(ps.rawOrder, name)
			}
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// Copy returns a copy of b whose parts can be set or removed without
// changing b's: the values themselves (the test description, the
// telemetry …) are shared, as b's other fields are. A Bundle copied as a
// struct shares its parts with the original.
func (b *Bundle) Copy() *Bundle {
	c := *b
	if ps := b.ps; ps != nil {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		c.ps = &partSet{parts: maps.Clone(ps.parts), raw: maps.Clone(ps.raw), rawOrder: slices.Clone(ps.rawOrder)}
	}
	return &c
}
