package tool

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// TestAddDeferredCompilesOnFirstUse: a tool added with AddDeferred is
// listed at once, and its schemas compile on its first call or at Compile,
// whichever comes first, once, with the same checks as Add: invalid
// arguments are refused alike, from many goroutines at once.
func TestAddDeferredCompilesOnFirstUse(t *testing.T) {
	r := NewRegistry("v")
	tl := valid()
	tl.OutputSchema = json.RawMessage(`{"type":"object","properties":{}}`)
	if err := r.AddDeferred(tl); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Lookup("t")
	if e.schema != nil {
		t.Fatal("AddDeferred compiled the schema")
	}
	if d := e.Definition(); string(d.InputSchema) == "" || string(d.OutputSchema) != `{"type":"object","properties":{}}` {
		t.Fatalf("definition before the compile: %+v", d)
	}
	var wg sync.WaitGroup
	errs := make([]*Error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				if err := r.Compile(); err != nil {
					t.Error(err)
				}
				return
			}
			_, errs[i] = e.CheckArgs(json.RawMessage(`{"n":0}`))
		}()
	}
	wg.Wait()
	for _, err := range errs[1:] {
		if err == nil || err.Code != InvalidRequest || !strings.Contains(err.Message, "/n") {
			t.Fatalf("invalid arguments: %v", err)
		}
	}
	if _, err := e.CheckArgs(json.RawMessage(`{"n":2}`)); err != nil {
		t.Fatalf("valid arguments: %v", err)
	}
	if err := e.CheckResult(json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
}

// TestAddDeferredSchemaThatDoesNotCompile: what Add refuses for its
// compile, AddDeferred registers; Compile then names it, and its calls are
// refused with an internal error, never run unchecked.
func TestAddDeferredSchemaThatDoesNotCompile(t *testing.T) {
	tl := valid()
	tl.InputSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"x":{"$ref":"https://example.com/s.json","description":"x"}}}`)
	if err := NewRegistry("v").Add(tl); err == nil || !strings.Contains(err.Error(), "does not compile") {
		t.Fatalf("Add: %v", err)
	}
	r := NewRegistry("v")
	if err := r.AddDeferred(tl); err != nil {
		t.Fatalf("AddDeferred: %v", err)
	}
	if err := r.Compile(); err == nil || !strings.Contains(err.Error(), `tool "t"`) || !strings.Contains(err.Error(), "does not compile") {
		t.Fatalf("Compile: %v", err)
	}
	e, _ := r.Lookup("t")
	if _, err := e.CheckArgs(json.RawMessage(`{}`)); err == nil || err.Code != Internal || !strings.Contains(err.Message, "does not compile") {
		t.Fatalf("a call: %v", err)
	}
	// The checks that cost nothing still refuse at once.
	bad := valid()
	bad.Name, bad.Description = "u", ""
	if err := r.AddDeferred(bad); err == nil {
		t.Fatal("AddDeferred took a tool without a description")
	}
}
