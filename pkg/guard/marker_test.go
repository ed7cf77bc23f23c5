package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadMarkersAreClearErrors(t *testing.T) {
	cases := map[string]struct {
		content string
		why     string
	}{
		"empty":              {"", "is empty"},
		"blank":              {" \n\n", "is empty"},
		"one line":           {"1.0\n", "has 1 line(s), want 2"},
		"three lines":        {"1.0\n0.1.0\nextra\n", "has 3 line(s), want 2"},
		"garbage":            {"hello\nworld\n", `line 1: "hello" is not MAJOR.MINOR`},
		"three parts":        {"1.0.0\nx\n", "line 1"},
		"signed":             {"+1.0\nx\n", "line 1"},
		"negative":           {"-1.0\nx\n", "line 1"},
		"overflow":           {"99999999999.0\nx\n", "line 1"},
		"blank line 2":       {"1.0\n   \n", "line 2: the hearthd version is empty"},
		"control in line 2":  {"1.0\n0.1\x00\n", "line 2"},
		"not UTF-8":          {"1.0\n\xff\xfe\n", "is not UTF-8"},
		"huge":               {strings.Repeat("9", 1<<20), "is 1048576 bytes"},
		"just over the size": {"1.0\n" + strings.Repeat("v", maxMarker), "bytes; a marker is two short lines"},
		"long line 2":        {"1.0\n" + strings.Repeat("v", maxBuild+1) + "\n", "line 2: the hearthd version is over"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, filepath.Join(home, MarkerName), c.content)
			before := treeHash(t, home)
			_, err := Check(home, build)
			ge := refusal(t, err)
			if ge.ExitCode != ExitDataErr || ge.Reason != ReasonBadMarker || ge.Err == nil {
				t.Fatalf("refusal %+v", ge)
			}
			for _, want := range []string{"format marker " + filepath.Join(home, MarkerName), c.why, "Nothing was changed", "hearthd migrate --adopt"} {
				if !strings.Contains(ge.Message, want) {
					t.Errorf("message lacks %q:\n%s", want, ge.Message)
				}
			}
			if len(ge.Message) > 1024 {
				t.Errorf("message is %d bytes: it echoes the file", len(ge.Message))
			}
			if treeHash(t, home) != before {
				t.Fatal("a bad marker was rewritten")
			}
		})
	}
}

func TestMarkerThatIsNotAFile(t *testing.T) {
	cases := map[string]func(t *testing.T, path string){
		"directory": func(t *testing.T, p string) { os.Mkdir(p, 0o700) },
		"symlink to a good marker": func(t *testing.T, p string) {
			good := filepath.Join(t.TempDir(), "m")
			writeFile(t, good, Format+"\n"+build+"\n")
			os.Symlink(good, p)
		},
		"dangling symlink": func(t *testing.T, p string) { os.Symlink("/nonexistent/marker", p) },
	}
	for name, make := range cases {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			make(t, filepath.Join(home, MarkerName))
			_, err := Check(home, build)
			if ge := refusal(t, err); ge.ExitCode != ExitDataErr || !strings.Contains(ge.Message, "is not a regular file") {
				t.Fatalf("%+v", ge)
			}
		})
	}
}

// A hand-edited marker with Windows line ends, spaces or no final newline
// still reads.
func TestMarkerTolerance(t *testing.T) {
	for _, content := range []string{
		Format + "\r\n" + build + "\r\n",
		Format + "\n" + build,
		" " + Format + " \n  " + build + "  \n",
	} {
		home := t.TempDir()
		writeFile(t, filepath.Join(home, MarkerName), content)
		res, err := Check(home, build)
		if err != nil || res.Format != current || res.WrittenBy != build {
			t.Errorf("%q: %+v %v", content, res, err)
		}
	}
}

func TestParseVersion(t *testing.T) {
	good := map[string]Version{"1.0": {1, 0}, " 12.3 ": {12, 3}, "0.0": {0, 0}, "1.10": {1, 10}, "01.0": {1, 0}}
	for s, want := range good {
		if v, err := ParseVersion(s); err != nil || v != want {
			t.Errorf("%q: %v %v, want %v", s, v, err, want)
		}
	}
	for _, bad := range []string{"", "1", "1.", ".1", "a.b", "1.2.3", "1.-2", "+1.0", "1.+0", "1 .0", "1e3.0", "1234567890.0", "１.０"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if current.String() != Format {
		t.Errorf("Format %q does not round-trip: %v", Format, current)
	}
	if !(Version{1, 10}).newer(Version{1, 9}) || (Version{1, 9}).newer(Version{2, 0}) || current.newer(current) {
		t.Error("newer orders versions wrongly")
	}
}
