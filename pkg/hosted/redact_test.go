package hosted

import (
	"slices"
	"strings"
	"testing"
)

// Each kind of argument that may carry a secret is shown redacted; others
// are shown as they are.
func TestRedactArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--token=s3cret", "--port=8080"}, []string{"--token=***", "--port=8080"}},
		{[]string{"--api-key", "s3cret", "--verbose"}, []string{"--api-key", "***", "--verbose"}},
		{[]string{"--API_KEY", "s3cret"}, []string{"--API_KEY", "***"}},
		{[]string{"-access-token=s3cret"}, []string{"-access-token=***"}},
		{[]string{"--password", "hunter2", "--user", "me"}, []string{"--password", "***", "--user", "me"}},
		{[]string{"--client-secret=a=b"}, []string{"--client-secret=***"}},
		{[]string{"--auth-header", "Bearer s3cret"}, []string{"--auth-header", "***"}},
		{[]string{"GITHUB_TOKEN=s3cret", "MODE=fast"}, []string{"GITHUB_TOKEN=***", "MODE=fast"}},
		{[]string{"-H", "Authorization: Bearer s3cret"}, []string{"-H", "Authorization: ***"}},
		{[]string{"-H", "X-Api-Key:s3cret", "-H", "Accept: text/plain"}, []string{"-H", "X-Api-Key: ***", "-H", "Accept: text/plain"}},
		{[]string{"Bearer s3cret"}, []string{"Bearer ***"}},
		{[]string{"postgres://me:s3cret@db:5432/app"}, []string{"postgres://me:***@db:5432/app"}},
		{[]string{"--db=postgres://me:s3cret@db/app"}, []string{"--db=postgres://me:***@db/app"}},
		{[]string{"https://s3cret@api.example.com/"}, []string{"https://***@api.example.com/"}},
		{[]string{"https://api.example.com/v1?api_key=s3cret&q=1"}, []string{"https://api.example.com/v1?api_key=***&q=1"}},
		{[]string{"https://me:s3%cret@host/"}, []string{"https://***@host/"}},
		{[]string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me/src"}, []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me/src"}},
		{[]string{"https://example.com/a:b"}, []string{"https://example.com/a:b"}},
		{[]string{"--token"}, []string{"--token"}},
		{[]string{"-p", "s3cret"}, []string{"-p", "s3cret"}}, // single-letter flags: not known
		{nil, []string{}},
	} {
		got := RedactArgs(tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
		if len(tc.in) > 0 && tc.in[0] != "-p" && strings.Contains(strings.Join(got, " "), "s3cret") {
			t.Errorf("%q: the secret shows in %q", tc.in, got)
		}
	}
}

// The label and the log file name of a hosted command show no secret; the
// log file name holds no argument but the package it runs (RunName).
func TestLabelAndLogNameHideArguments(t *testing.T) {
	spec := Spec{Command: "/usr/bin/npx", Args: []string{"-y", "some-server", "--token=s3cret", "--api-key", "k3y"}}
	if l := spec.Label(); l != "npx -y some-server --token=*** --api-key ***" {
		t.Fatalf("label %q", l)
	}
	tb := &Table{logDir: "/logs"}
	if p := tb.logPath(spec, "0123456789abcdef"); p != "/logs/some-server-0123456789abcdef.log" {
		t.Fatalf("log path %q", p)
	}
	spec.Name = "my server"
	if p := tb.logPath(spec, "0123456789abcdef"); p != "/logs/my_server-0123456789abcdef.log" {
		t.Fatalf("log path %q", p)
	}
}
