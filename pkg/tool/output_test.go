package tool

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestOutputOfTags: a field's tags add the keywords its type cannot say, so
// a derived schema equals the hand-written one it replaces.
func TestOutputOfTags(t *testing.T) {
	type counts struct {
		N int `json:"n"`
	}
	type out struct {
		*counts
		Status string  `json:"status" enum:"ok,none" jsonschema:"How it went."`
		Kind   string  `json:"kind" const:"success"`
		Gone   bool    `json:"gone" const:"true"`
		Count  int     `json:"count" minimum:"0" jsonschema:"How many."`
		Where  *string `json:"where" jsonschema:"The place, or null."`
		Note   string  `json:"note,omitempty"`
	}
	got, err := OutputOf(reflect.TypeFor[out]())
	if err != nil {
		t.Fatal(err)
	}
	want := Output(
		Prop("status", `{"type":"string","enum":["ok","none"],"description":"How it went."}`).Required(),
		Prop("kind", `{"type":"string","const":"success"}`).Required(),
		Prop("gone", `{"type":"boolean","const":true}`).Required(),
		Prop("count", `{"type":"integer","minimum":0,"description":"How many."}`).Required(),
		Prop("where", `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"The place, or null."}`).Required(),
		Prop("note", `{"type":"string"}`),
		Prop("n", `{"type":"integer"}`))
	if !sameJSON(t, got, want) {
		t.Errorf("derived\n%s\nwant\n%s", got, want)
	}
}

// sameJSON compares two documents as values (member order aside).
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
