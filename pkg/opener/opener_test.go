package opener

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCommand(t *testing.T) {
	for _, c := range []struct {
		setting, override, goos string
		want                    []string
	}{
		{"", "", "linux", []string{"xdg-open"}},
		{"", "", "freebsd", []string{"xdg-open"}},
		{"", "", "darwin", []string{"open"}},
		{"", "", "windows", []string{"rundll32", "url.dll,FileProtocolHandler"}},
		{"firefox --new-window", "", "linux", []string{"firefox", "--new-window"}},
		{"firefox", "curl -sL -o /dev/null", "linux", []string{"curl", "-sL", "-o", "/dev/null"}},
		{"firefox", "   ", "linux", []string{"firefox"}},
	} {
		got, err := Command(c.setting, c.override, c.goos)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: %q %v", c, got, err)
		}
	}
	if _, err := Command("", `"unclosed`, "linux"); err == nil || !strings.Contains(err.Error(), Env) {
		t.Fatalf("bad override: %v", err)
	}
}

// Split: the shell's words, nothing expanded; bad input is refused.
func TestSplit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"a b  c", []string{"a", "b", "c"}, false},
		{`'/path with space/br' --x`, []string{"/path with space/br", "--x"}, false},
		{`"a \"b\" \\ \$HOME \n"`, []string{`a "b" \ $HOME \n`}, false},
		{`a\ b`, []string{"a b"}, false},
		{`''`, []string{""}, false},
		{`x''y`, []string{"xy"}, false},
		{`$HOME ~ *`, []string{"$HOME", "~", "*"}, false},
		{"", nil, true},
		{"  \t ", nil, true},
		{`'a`, nil, true},
		{`"a`, nil, true},
		{`a\`, nil, true},
	} {
		got, err := Split(c.in)
		if c.err != (err != nil) || (!c.err && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("Split(%q) = %q, %v", c.in, got, err)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"a b", `'x y'`, `"a\"b"`, `a\ b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err == nil && len(words) == 0 {
			t.Fatalf("%q: no words and no error", s)
		}
	})
}

// Open runs the command with the URL last, and reports a failing one.
func TestOpen(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	out := filepath.Join(t.TempDir(), "got")
	argv := []string{"/bin/sh", "-c", `printf '%s' "$1" > "$0"`, out}
	if err := Open(context.Background(), argv, "http://127.0.0.1:1/cb?x=1&y=2"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if string(got) != "http://127.0.0.1:1/cb?x=1&y=2" {
		t.Fatalf("the opener got %q", got)
	}
	err := Open(context.Background(), []string{"/bin/sh", "-c", "echo no browser here >&2; exit 3"}, "http://x/")
	if err == nil || !strings.Contains(err.Error(), "no browser here") {
		t.Fatalf("failing opener: %v", err)
	}
	if err := Open(context.Background(), []string{filepath.Join(t.TempDir(), "none")}, "http://x/"); err == nil {
		t.Fatal("missing opener")
	}
}
