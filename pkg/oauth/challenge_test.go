package oauth

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Challenge
		err  bool
	}{
		{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`,
			[]Challenge{{"Bearer", map[string]string{"resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource", "scope": "files:read"}}}, false},
		{`Bearer error="insufficient_scope", scope="a b", resource_metadata="x", error_description="need \"b\", really"`,
			[]Challenge{{"Bearer", map[string]string{"error": "insufficient_scope", "scope": "a b", "resource_metadata": "x", "error_description": `need "b", really`}}}, false},
		{`Basic realm="x", Bearer scope=read`,
			[]Challenge{{"Basic", map[string]string{"realm": "x"}}, {"Bearer", map[string]string{"scope": "read"}}}, false},
		{`Bearer`, []Challenge{{"Bearer", map[string]string{}}}, false},
		{`Negotiate abc123==, Bearer Realm="r"`,
			[]Challenge{{"Negotiate", map[string]string{"": "abc123=="}}, {"Bearer", map[string]string{"realm": "r"}}}, false},
		{`Bearer  ,  , scope = "a"`, []Challenge{{"Bearer", map[string]string{"scope": "a"}}}, false},
		{`Bearer scope="unclosed`, nil, true},
		{`scope="a"`, nil, true},
		{`Bearer scope=`, []Challenge{{"Bearer", map[string]string{"": "scope="}}}, false}, // a token68 by the grammar
		{`Bearer a=b=c`, nil, true},
		{`Bearer scope="a" junk`, nil, true},
		{`"quoted"`, nil, true},
		{strings.Repeat("a", 9000), nil, true},
	} {
		got, err := ParseChallenges([]string{c.in})
		if c.err != (err != nil) {
			t.Errorf("%q: error %v", c.in, err)
			continue
		}
		if !c.err && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.in, got, c.want)
		}
	}
	h := http.Header{}
	h.Add("WWW-Authenticate", `Basic realm="a"`)
	h.Add("WWW-Authenticate", `Bearer error="insufficient_scope", scope="x y"`)
	b, ok := Bearer(h)
	if !ok || b.Error() != "insufficient_scope" || strings.Join(b.Scopes(), ",") != "x,y" {
		t.Fatalf("%+v %v", b, ok)
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Bearer a="b", c=d`, `Basic abc==, Bearer`, `Bearer x="\"`, `,,`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, _ := ParseChallenges([]string{s})
		for _, c := range cs {
			if c.Scheme == "" {
				t.Fatalf("%q: a challenge without a scheme", s)
			}
		}
	})
}
