package jsonl

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// official is a file as server-memory writes it: entities, then relations,
// lines joined by "\n" with none after the last.
const official = `{"type":"entity","name":"Alice","entityType":"person","observations":["likes <tea> & \"cake\"","ünïcode ✓"]}
{"type":"entity","name":"Bob","entityType":"person","observations":[]}
{"type":"relation","from":"Alice","to":"Bob","relationType":"knows"}`

func TestReadWriteRoundTrip(t *testing.T) {
	g, err := Read(strings.NewReader(official))
	if err != nil {
		t.Fatal(err)
	}
	want := store.Subgraph{
		Entities: []store.Entity{{Name: "Alice", Type: "person", Observations: []string{`likes <tea> & "cake"`, "ünïcode ✓"}},
			{Name: "Bob", Type: "person", Observations: []string{}}},
		Relations: []store.Relation{{From: "Alice", To: "Bob", Type: "knows"}},
	}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("read %+v", g)
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, e := range g.Entities {
		if err := w.Entity(e); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range g.Relations {
		if err := w.Relation(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out.String() != official {
		t.Fatalf("written:\n%s\nwant the official server's bytes:\n%s", out.String(), official)
	}
}

func TestReadTolerates(t *testing.T) {
	g, err := Read(strings.NewReader("\n  \r\n" + `{"type":"entity","name":"A","entityType":"t","extra":1}` + "\r\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Entities) != 1 || g.Entities[0].Observations == nil {
		t.Fatalf("%+v", g)
	}
	if g, err := Read(strings.NewReader("")); err != nil || len(g.Entities)+len(g.Relations) != 0 {
		t.Fatalf("empty file: %+v %v", g, err)
	}
}

func TestReadBadLines(t *testing.T) {
	long := strings.Repeat("x", store.MaxNameLen+1)
	tests := []struct {
		line, want string
	}{
		{`not json`, "line 2: not a JSON object"},
		{`{"type":"entity","name":"A"`, "line 2: not valid JSON"},
		{`["entity"]`, "line 2: not a JSON object"},
		{`{"name":"A","entityType":"t"}`, `line 2: no "type"`},
		{`{"type":"node","name":"A"}`, `line 2: "type" is "node"`},
		{`{"type":"entity","entityType":"t"}`, `line 2: entity: no "name"`},
		{`{"type":"entity","name":"","entityType":"t"}`, `line 2: entity: "name" is empty`},
		{`{"type":"entity","name":"A"}`, `line 2: entity "A": no "entityType"`},
		{`{"type":"entity","name":5,"entityType":"t"}`, `line 2: "name" is not a string`},
		{`{"type":"entity","name":"A","entityType":"t","observations":"x"}`, `line 2: "observations" is not a list of strings`},
		{`{"type":"entity","name":"A","entityType":"t","observations":[1]}`, `line 2: "observations" is not a list of strings`},
		{`{"type":"entity","name":"` + long + `","entityType":"t"}`, `line 2: entity: "name" has 1001 characters`},
		{`{"type":"relation","from":"A","relationType":"r"}`, `line 2: relation: no "to"`},
		{`{"type":"relation","from":"A","to":"B","relationType":""}`, `line 2: relation: "relationType" is empty`},
		{"{\"type\":\"entity\",\"name\":\"\xff\",\"entityType\":\"t\"}", "line 2: not UTF-8"},
		{`{"type":"entity","name":"a\u0000b","entityType":"t"}`, `line 2: entity: "name" holds a NUL character (U+0000)`},
		{`{"type":"entity","name":"A","entityType":"t","observations":["ok","\u0000"]}`, `line 2: entity "A": observation 2 holds a NUL character`},
		{`{"type":"relation","from":"A","to":"\u0000","relationType":"r"}`, `line 2: relation: "to" holds a NUL character`},
	}
	for _, tc := range tests {
		_, err := Read(strings.NewReader(`{"type":"entity","name":"ok","entityType":"t","observations":[]}` + "\n" + tc.line + "\n"))
		var le *LineError
		if !errors.As(err, &le) || le.Line != 2 || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to start %q", tc.line, err, tc.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("%s: error of %d bytes", tc.line, len(err.Error()))
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(official))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"type":"relation","from":"a","to":"b","relationType":"r"}`))
	f.Add([]byte(`{"type":"entity","name":"\u2028","entityType":"","observations":["\u0000"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(bytes.NewReader(data))
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("an error that names no line: %v", err)
			}
			return
		}
		// What was read writes and reads back the same.
		var out bytes.Buffer
		w := NewWriter(&out)
		for _, e := range g.Entities {
			if err := w.Entity(e); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range g.Relations {
			if err := w.Relation(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&out)
		if err != nil {
			t.Fatalf("written file does not read back: %v", err)
		}
		if !reflect.DeepEqual(g, back) {
			t.Fatalf("round trip:\n%+v\n%+v", g, back)
		}
	})
}
