// Package jsonl reads and writes the official MCP memory server's file (its
// MEMORY_FILE_PATH): one JSON object per line, each an entity
// {"type":"entity","name","entityType","observations"} or a relation
// {"type":"relation","from","to","relationType"}. `hearthd memory import`
// and `hearthd memory export` use it.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// MaxLine is the longest line Read takes, in bytes.
const MaxLine = 64 << 20

// LineError is a line Read refuses: its number (from 1) and what is wrong,
// never the line's content.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// record is one line, either kind.
type record struct {
	Type         *string   `json:"type"`
	Name         *string   `json:"name"`
	EntityType   *string   `json:"entityType"`
	Observations *[]string `json:"observations"`
	From         *string   `json:"from"`
	To           *string   `json:"to"`
	RelationType *string   `json:"relationType"`
}

// Read parses a whole file. Blank lines are skipped, as the official server
// skips them; any other line that is not an entity or a relation within the
// store's limits fails the whole read with a *LineError naming it. Members
// other than the format's are ignored. An entity without observations has
// none.
func Read(r io.Reader) (store.Subgraph, error) {
	var g store.Subgraph
	br := bufio.NewReaderSize(r, 1<<16)
	var buf []byte
	for n := 1; ; n++ {
		line, err := readLine(br, &buf)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errTooLong) {
				return store.Subgraph{}, &LineError{n, fmt.Sprintf("longer than %d bytes", MaxLine)}
			}
			return store.Subgraph{}, fmt.Errorf("line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := parse(line, &g); perr != "" {
				return store.Subgraph{}, &LineError{n, perr}
			}
		}
		if errors.Is(err, io.EOF) {
			return g, nil
		}
	}
}

var errTooLong = errors.New("line too long")

// readLine returns the next line without its newline; io.EOF with the last.
func readLine(br *bufio.Reader, buf *[]byte) ([]byte, error) {
	*buf = (*buf)[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		if len(*buf)+len(chunk) > MaxLine+1 {
			return nil, errTooLong
		}
		*buf = append(*buf, chunk...)
		switch {
		case err == nil:
			return (*buf)[:len(*buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return *buf, err
		}
	}
}

func parse(line []byte, g *store.Subgraph) string {
	if !utf8.Valid(line) {
		return "not UTF-8"
	}
	if b := bytes.TrimSpace(line); len(b) == 0 || b[0] != '{' {
		return "not a JSON object"
	}
	var rec record
	if err := json.Unmarshal(line, &rec); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Sprintf("%q is not a %s", te.Field, want(te.Field))
		}
		return "not valid JSON: " + err.Error()
	}
	if rec.Type == nil {
		return `no "type" (want "entity" or "relation")`
	}
	switch *rec.Type {
	case "entity":
		if msg := text("name", rec.Name, 1, store.MaxNameLen); msg != "" {
			return "entity: " + msg
		}
		if msg := text("entityType", rec.EntityType, 0, store.MaxTypeLen); msg != "" {
			return "entity " + quoteName(*rec.Name) + ": " + msg
		}
		obs := []string{}
		if rec.Observations != nil {
			obs = *rec.Observations
		}
		for i, o := range obs {
			if strings.IndexByte(o, 0) >= 0 {
				return fmt.Sprintf("entity %s: observation %d holds a NUL character (U+0000), which the memory store does not keep", quoteName(*rec.Name), i+1)
			}
			if n := utf8.RuneCountInString(o); n > store.MaxObservationLen {
				return fmt.Sprintf("entity %s: observation %d has %d characters, at most %d", quoteName(*rec.Name), i+1, n, store.MaxObservationLen)
			}
		}
		g.Entities = append(g.Entities, store.Entity{Name: *rec.Name, Type: *rec.EntityType, Observations: obs})
	case "relation":
		for _, f := range []struct {
			key string
			v   *string
			min int
			max int
		}{{"from", rec.From, 1, store.MaxNameLen}, {"to", rec.To, 1, store.MaxNameLen}, {"relationType", rec.RelationType, 1, store.MaxTypeLen}} {
			if msg := text(f.key, f.v, f.min, f.max); msg != "" {
				return "relation: " + msg
			}
		}
		g.Relations = append(g.Relations, store.Relation{From: *rec.From, To: *rec.To, Type: *rec.RelationType})
	default:
		return fmt.Sprintf(`"type" is %s (want "entity" or "relation")`, quoteName(*rec.Type))
	}
	return ""
}

func want(field string) string {
	if field == "observations" {
		return "list of strings"
	}
	return "string"
}

func text(key string, v *string, min, max int) string {
	switch {
	case v == nil:
		return fmt.Sprintf("no %q", key)
	case min > 0 && *v == "":
		return fmt.Sprintf("%q is empty", key)
	case strings.IndexByte(*v, 0) >= 0:
		return fmt.Sprintf("%q holds a NUL character (U+0000), which the memory store does not keep", key)
	case utf8.RuneCountInString(*v) > max:
		return fmt.Sprintf("%q has %d characters, at most %d", key, utf8.RuneCountInString(*v), max)
	}
	return ""
}

// quoteName quotes a name for an error, cut to 60 characters.
func quoteName(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:60]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// Writer writes the format, as the official server writes it: one record
// per line, entities first, no trailing newline after the last.
type Writer struct {
	w     *bufio.Writer
	first bool
	buf   bytes.Buffer
	enc   *json.Encoder
}

// NewWriter writes to w; call Flush at the end.
func NewWriter(w io.Writer) *Writer {
	jw := &Writer{w: bufio.NewWriterSize(w, 1<<16), first: true}
	jw.enc = json.NewEncoder(&jw.buf)
	jw.enc.SetEscapeHTML(false) // as JSON.stringify writes <, > and &
	return jw
}

type entityLine struct {
	Type         string   `json:"type"`
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

type relationLine struct {
	Type         string `json:"type"`
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

// Entity writes one entity.
func (w *Writer) Entity(e store.Entity) error {
	obs := e.Observations
	if obs == nil {
		obs = []string{}
	}
	return w.line(entityLine{"entity", e.Name, e.Type, obs})
}

// Relation writes one relation.
func (w *Writer) Relation(r store.Relation) error {
	return w.line(relationLine{"relation", r.From, r.To, r.Type})
}

func (w *Writer) line(v any) error {
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	if !w.first {
		if err := w.w.WriteByte('\n'); err != nil {
			return err
		}
	}
	w.first = false
	_, err := w.w.Write(bytes.TrimSuffix(w.buf.Bytes(), []byte("\n")))
	return err
}

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.w.Flush() }
