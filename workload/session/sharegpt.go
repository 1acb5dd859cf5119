package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Set is a list of conversations.
type Set struct {
	// Name is the file's base name, or a description of generated ones.
	Name string
	// Conversations are in file order.
	Conversations []Conversation
	// Skipped counts the entries without one complete exchange (an empty
	// "conversations", or a lone user turn); Dropped the last user turns
	// left out because no answer followed them (no reference length).
	Skipped, Dropped int
}

// ShareGPTOptions configure ReadShareGPT.
type ShareGPTOptions struct {
	// Think is the think time before every turn after the first
	// (ShareGPT records none); 0 sends each turn as soon as the previous
	// answer is complete.
	Think time.Duration
	// MaxSessions keeps the first MaxSessions conversations; 0 keeps all.
	MaxSessions int
}

// roles maps ShareGPT's speaker names to chat roles.
var roles = map[string]string{
	"human": "user", "user": "user",
	"gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant", "bard": "assistant", "bing": "assistant", "model": "assistant",
	"system": "system",
}

// ReadShareGPT reads a ShareGPT file at path: a JSON array of entries, or
// one entry a line, each {"id": …, "conversations": [{"from": "human",
// "value": …}, {"from": "gpt", "value": …}, …]} ("role" and "content" are
// accepted for "from" and "value").
func ReadShareGPT(path string, o ShareGPTOptions) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseShareGPT(bytes.NewReader(b), filepath.Base(path), o)
}

// ParseShareGPT reads ShareGPT entries from r (see ReadShareGPT); name
// labels the set and its errors, which name the line, the entry and the
// turn. The turns must alternate user, assistant, user, …, after an
// optional first system turn; no message may be empty.
func ParseShareGPT(r io.Reader, name string, o ShareGPTOptions) (*Set, error) {
	if o.Think < 0 {
		return nil, fmt.Errorf("sharegpt %s: think time %v is negative", name, o.Think)
	}
	if o.MaxSessions < 0 {
		return nil, fmt.Errorf("sharegpt %s: max sessions %d is negative", name, o.MaxSessions)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("sharegpt %s: %w", name, err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	s := &Set{Name: name}
	p := &parser{set: s, data: data, o: o}
	start := skipSpace(data, 0)
	if start < len(data) && data[start] == '[' {
		err = p.array(start)
	} else {
		err = p.lines()
	}
	if err != nil {
		return nil, err
	}
	if len(s.Conversations) == 0 {
		return nil, fmt.Errorf("sharegpt %s: no conversation with a complete exchange (%d entries skipped)", name, s.Skipped)
	}
	return s, nil
}

type parser struct {
	set  *Set
	data []byte
	o    ShareGPTOptions
	// line counting: the line of offset lineAt is line.
	lineAt, line int
	entries      int
}

// lineOf returns the line of offset off (≥ every earlier call's).
func (p *parser) lineOf(off int) int {
	if p.line == 0 {
		p.line = 1
	}
	p.line += bytes.Count(p.data[p.lineAt:off], []byte("\n"))
	p.lineAt = off
	return p.line
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

func (p *parser) full() bool {
	return p.o.MaxSessions > 0 && len(p.set.Conversations) >= p.o.MaxSessions
}

// array reads a JSON array of entries.
func (p *parser) array(start int) error {
	dec := json.NewDecoder(bytes.NewReader(p.data))
	if _, err := dec.Token(); err != nil { // '['
		return fmt.Errorf("sharegpt %s: %v", p.set.Name, err)
	}
	for dec.More() && !p.full() {
		off := skipSpace(p.data, int(dec.InputOffset()))
		if off < len(p.data) && p.data[off] == ',' {
			off = skipSpace(p.data, off+1)
		}
		line := p.lineOf(off)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if endOfData(err) {
				return fmt.Errorf("sharegpt %s line %d: entry %d: the file ends (line %d, byte %d) before this entry is complete: it is truncated, not complete JSON",
					p.set.Name, line, p.entries, p.lineOf(len(p.data)), len(p.data))
			}
			return fmt.Errorf("sharegpt %s line %d: entry %d: %v", p.set.Name, line, p.entries, err)
		}
		if err := p.entry(raw, line); err != nil {
			return err
		}
	}
	if p.full() {
		return nil
	}
	if _, err := dec.Token(); err != nil { // ']'
		if endOfData(err) {
			return fmt.Errorf("sharegpt %s line %d: after entry %d: the file ends before the array's closing ]: it is truncated, not complete JSON",
				p.set.Name, p.lineOf(len(p.data)), p.entries-1)
		}
		return fmt.Errorf("sharegpt %s line %d: after entry %d: %v", p.set.Name, p.lineOf(int(dec.InputOffset())), p.entries, err)
	}
	if rest := skipSpace(p.data, int(dec.InputOffset())); rest < len(p.data) {
		return fmt.Errorf("sharegpt %s line %d: text after the array", p.set.Name, p.lineOf(rest))
	}
	return nil
}

// lines reads one entry a line.
func (p *parser) lines() error {
	off := 0
	for off < len(p.data) && !p.full() {
		end := bytes.IndexByte(p.data[off:], '\n')
		if end < 0 {
			end = len(p.data)
		} else {
			end += off
		}
		line := p.lineOf(off)
		if b := bytes.TrimSpace(p.data[off:end]); len(b) > 0 {
			if err := p.entry(b, line); err != nil {
				return err
			}
		}
		off = end + 1
	}
	return nil
}

// endOfData reports whether err, from encoding/json, says that the data
// ended before the JSON value did: a truncated file or line.
func endOfData(err error) bool {
	var se *json.SyntaxError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &se) && se.Error() == "unexpected end of JSON input"
}

// entry reads one ShareGPT entry.
func (p *parser) entry(raw []byte, line int) error {
	idx := p.entries
	p.entries++
	var e struct {
		Conversations []json.RawMessage `json:"conversations"`
	}
	where := fmt.Sprintf("sharegpt %s line %d: entry %d", p.set.Name, line, idx)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return bad("want an object with \"conversations\"")
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		if endOfData(err) {
			return bad("the line ends before its JSON object does: not complete JSON (is the file truncated?)")
		}
		return bad("%v", err)
	}
	c := Conversation{Index: len(p.set.Conversations)}
	if v := probe["id"]; len(v) > 0 && string(v) != "null" {
		var id string
		if json.Unmarshal(v, &id) != nil {
			id = string(v) // a number id
		}
		c.ID = id
		where += fmt.Sprintf(" (id %q)", id)
	}
	if _, ok := probe["conversations"]; !ok {
		return bad(`no "conversations" field`)
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return bad(`"conversations": want an array of {"from": …, "value": …}: %v`, err)
	}
	want := "user"
	for i, rt := range e.Conversations {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(rt, &m); err != nil || m == nil {
			return bad(`"conversations"[%d]: want an object {"from": …, "value": …}`, i)
		}
		fromKey, valueKey := "from", "value"
		if _, ok := m[fromKey]; !ok {
			fromKey, valueKey = "role", "content"
		}
		var from, value string
		if err := json.Unmarshal(m[fromKey], &from); err != nil || from == "" {
			return bad(`"conversations"[%d]: field "from": want a speaker ("human", "gpt", "system")`, i)
		}
		if err := json.Unmarshal(m[valueKey], &value); err != nil {
			return bad(`"conversations"[%d]: field "value": want a string`, i)
		}
		role, ok := roles[strings.ToLower(from)]
		if !ok {
			return bad(`"conversations"[%d]: field "from": unknown speaker %q (want human, user, gpt, assistant or system)`, i, from)
		}
		if strings.TrimSpace(value) == "" {
			return bad(`"conversations"[%d]: field "value": empty %s turn`, i, from)
		}
		if n := wordCount(value); n > MaxTurnWords {
			return bad(`"conversations"[%d]: field "value": %d words, over the %d a turn may hold`, i, n, MaxTurnWords)
		}
		switch {
		case role == "system" && i == 0:
			c.System = value
			continue
		case role == "system":
			return bad(`"conversations"[%d]: a system turn after the first turn`, i)
		case role != want:
			return bad(`"conversations"[%d]: %s turn where %s turn must come: the turns must alternate user, assistant, user, …`, i, article(role), article(want))
		}
		if role == "user" {
			if len(c.Turns) >= MaxTurns {
				return bad(`"conversations"[%d]: more than %d user turns`, i, MaxTurns)
			}
			t := Turn{User: value}
			if len(c.Turns) > 0 {
				t.Think = p.o.Think
			}
			c.Turns = append(c.Turns, t)
			want = "assistant"
		} else {
			t := &c.Turns[len(c.Turns)-1]
			t.Answer, t.OutputTokens = value, max(wordCount(value), 1)
			want = "user"
		}
	}
	if n := len(c.Turns); n > 0 && c.Turns[n-1].OutputTokens == 0 {
		c.Turns = c.Turns[:n-1] // no answer: no reference length
		p.set.Dropped++
	}
	if len(c.Turns) == 0 {
		p.set.Skipped++
		return nil
	}
	p.set.Conversations = append(p.set.Conversations, c)
	return nil
}

func wordCount(s string) int { return len(strings.Fields(s)) }

// errNoTurns is returned by Generate for zero turns.
var errNoTurns = errors.New("session: a conversation needs at least one turn")

// article is "a user" or "an assistant": role with its indefinite article
// (by sound: only "assistant" of the roles takes "an").
func article(role string) string {
	if role == "assistant" {
		return "an " + role
	}
	return "a " + role
}
