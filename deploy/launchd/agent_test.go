package launchd

import (
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/agent.plist")

// The agent is the golden file, byte for byte.
func TestRenderGolden(t *testing.T) {
	a, err := Render("/opt/homebrew/bin/hearthd", "/Users/me")
	if err != nil {
		t.Fatal(err)
	}
	if a.Path != "/Users/me/Library/LaunchAgents/dev.hearth.hearthd.plist" {
		t.Fatalf("path %s", a.Path)
	}
	if *update {
		os.WriteFile("testdata/agent.plist", []byte(a.Content), 0o644)
	}
	want, err := os.ReadFile("testdata/agent.plist")
	if err != nil {
		t.Fatal(err)
	}
	if a.Content != string(want) {
		t.Fatalf("agent differs from testdata/agent.plist (go test -update rewrites it):\n%s", a.Content)
	}
}

// plist is the shape of a property list whose top dict holds keys and
// values, enough to read ProgramArguments back.
type plist struct {
	Dict struct {
		Inner []byte `xml:",innerxml"`
	} `xml:"dict"`
}

// A path with XML's special characters stays well-formed and reads back
// as itself: the property list is parsed, not only compared.
func TestRenderIsWellFormedXML(t *testing.T) {
	bin := "/Users/me/A & B <x>/bin/hearthd"
	a, err := Render(bin, "/Users/me")
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(strings.NewReader(a.Content))
	d.Strict = true
	var strs []string
	var keys []string
	var in string
	for {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("not well-formed XML: %v\n%s", err, a.Content)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			in = v.Name.Local
		case xml.CharData:
			switch in {
			case "string":
				strs = append(strs, string(v))
			case "key":
				keys = append(keys, string(v))
			}
		case xml.EndElement:
			in = ""
		}
	}
	if len(strs) < 3 || strs[1] != bin || strs[2] != "serve" {
		t.Fatalf("ProgramArguments read back as %q", strs)
	}
	for _, k := range []string{"Label", "ProgramArguments", "RunAtLoad", "KeepAlive", "SuccessfulExit"} {
		if !strings.Contains(strings.Join(keys, "\n")+"\n", k+"\n") {
			t.Errorf("key %s missing: %q", k, keys)
		}
	}
	var p plist
	if err := xml.Unmarshal([]byte(a.Content), &p); err != nil || len(p.Dict.Inner) == 0 {
		t.Fatalf("no top dict: %v", err)
	}
}

func TestRenderRefusesRelative(t *testing.T) {
	if _, err := Render("hearthd", "/Users/me"); err == nil {
		t.Fatal("a relative hearthd was accepted")
	}
	if _, err := Render("/bin/hearthd", "me"); err == nil {
		t.Fatal("a relative home was accepted")
	}
}

// Program reads back what Render wrote, and what a user's own edit holds;
// a list that runs nothing or is not XML is an error, never a guess.
func TestProgram(t *testing.T) {
	a, err := Render("/Users/me/A & B/hearthd", "/Users/me")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Program([]byte(a.Content)); err != nil || got != "/Users/me/A & B/hearthd" {
		t.Fatalf("Program(Render) = %q, %v", got, err)
	}
	head := `<?xml version="1.0"?><plist version="1.0"><dict>`
	for _, c := range []struct {
		name, in, want string
	}{
		{"Program key", head + `<key>Label</key><string>x</string><key>Program</key><string>/bin/hearthd</string></dict></plist>`, "/bin/hearthd"},
		{"nested arrays are not the arguments", head + `<key>Env</key><dict><key>ProgramArguments</key><array><string>/nope</string></array></dict><key>ProgramArguments</key><array><string>/usr/local/bin/hearthd</string></array></dict></plist>`, "/usr/local/bin/hearthd"},
		{"empty arguments", head + `<key>ProgramArguments</key><array></array></dict></plist>`, ""},
		{"no program", head + `<key>Label</key><string>x</string></dict></plist>`, ""},
		{"not XML", `{"Program": "/bin/hearthd"}`, ""},
		{"cut short", head + `<key>ProgramArguments</key><array><string>/bin/hea`, ""},
		{"empty", ``, ""},
	} {
		got, err := Program([]byte(c.in))
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: accepted as %q", c.name, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}
