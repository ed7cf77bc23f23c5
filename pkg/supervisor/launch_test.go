package supervisor

import (
	"errors"
	"strings"
	"testing"
)

const testCmdExe = `C:\Windows\system32\cmd.exe`

// How each program is started on Windows, and the exact command line of a
// batch file.
func TestWindowsLaunch(t *testing.T) {
	npx := `C:\Users\me\AppData\Roaming\npm\npx.cmd`
	prefix := `"` + testCmdExe + `" /d /e:ON /v:OFF /s /c ""` + npx + `"`
	for _, tc := range []struct {
		name     string
		resolved string
		args     []string
		program  string // "" with wantErr
		line     string // "": started directly
		wantErr  string
	}{
		{"an exe is started directly", `C:\Program Files\nodejs\node.exe`, []string{"a b", `x"y`}, `C:\Program Files\nodejs\node.exe`, "", ""},
		{"a com too, in any case", `C:\tools\X.COM`, nil, `C:\tools\X.COM`, "", ""},
		{"npx.cmd through cmd.exe", npx, []string{"-y", "@modelcontextprotocol/server-filesystem@2025.1.1", `C:\Users\me\proj`},
			testCmdExe, prefix + ` -y @modelcontextprotocol/server-filesystem@2025.1.1 C:\Users\me\proj"`, ""},
		{"a bat, upper case", `C:\x\RUN.BAT`, []string{"plain"}, testCmdExe, `"` + testCmdExe + `" /d /e:ON /v:OFF /s /c ""C:\x\RUN.BAT" plain"`, ""},
		{"no arguments", npx, nil, testCmdExe, prefix + `"`, ""},
		{"empty and spaced arguments are quoted", npx, []string{"", "a b", "\tx"}, testCmdExe, prefix + ` "" "a b" "` + "\t" + `x""`, ""},
		{"metacharacters stay inside quotes", npx, []string{"a&calc", "x|y", "<in", ">out", "^", "(b)"},
			testCmdExe, prefix + ` "a&calc" "x|y" "<in" ">out" "^" "(b)""`, ""},
		{"a quote is doubled", npx, []string{`a"&calc`, `"`}, testCmdExe, prefix + ` "a""&calc" """""`, ""},
		{"backslashes before a quote are doubled", npx, []string{`a\"b`, `dir\`}, testCmdExe, prefix + ` "a\\""b" "dir\\""`, ""},
		{"percent never expands", npx, []string{"%PATH%", "100%"}, testCmdExe, prefix + ` "%%cd:~,%PATH%%cd:~,%" "100%%cd:~,%""`, ""},
		{"delayed expansion is off and ! is quoted", npx, []string{"!PATH!"}, testCmdExe, prefix + ` "!PATH!""`, ""},
		{"non-ASCII letters pass", npx, []string{"café"}, testCmdExe, prefix + ` café"`, ""},
		// Refused, never run as something else.
		{"a line feed", npx, []string{"a\nb"}, "", "", "argument 1"},
		{"a carriage return", npx, []string{"ok", "a\r&calc"}, "", "", "argument 2"},
		{"a NUL", npx, []string{"a\x00b"}, "", "", "argument 1"},
		{"a quote in the script's path", `C:\a"b\x.cmd`, nil, "", "", "batch file path"},
		{"a percent in the script's path", `C:\100%\x.cmd`, nil, "", "", "batch file path"},
		{"a script, not a program", `C:\x\server.js`, nil, "", "", "only .exe, .com, .cmd and .bat"},
		{"a PowerShell script", `C:\x\s.ps1`, nil, "", "", "only .exe"},
		{"no extension", `C:\x.d\server`, nil, "", "", "without an extension"},
		// A name Windows would still run as a batch file (trailing dots and
		// spaces are stripped, a stream name ignored) is no .cmd to the
		// check, so it is refused rather than left to CreateProcess.
		{"a trailing dot", `C:\x\run.bat.`, []string{"&calc"}, "", "", "only .exe"},
		{"trailing spaces", `C:\x\run.cmd  `, []string{"&calc"}, "", "", "only .exe"},
		{"a stream name", `C:\x\run.cmd::$DATA`, []string{"&calc"}, "", "", "without an extension"},
	} {
		program, line, err := windowsLaunch(tc.resolved, tc.args, testCmdExe)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %q, %v; want an error with %q", tc.name, line, err, tc.wantErr)
			}
			if strings.HasPrefix(tc.wantErr, "argument") || strings.HasPrefix(tc.wantErr, "batch") {
				if !errors.Is(err, ErrBatchArgument) {
					t.Errorf("%s: %v is not ErrBatchArgument", tc.name, err)
				}
			}
			continue
		}
		if err != nil || program != tc.program || line != tc.line {
			t.Errorf("%s:\n got %q %q %v\nwant %q %q", tc.name, program, line, err, tc.program, tc.line)
			continue
		}
		if line != "" {
			if got := cmdReads(t, line); !equal(got, tc.args) {
				t.Errorf("%s: the batch file's program would read %q, want %q", tc.name, got, tc.args)
			}
		}
	}
}

// Every argument, whatever its bytes, reaches the batch file's program
// unchanged, or is refused: no metacharacter is outside quotes for cmd
// and no %NAME% expands.
func TestBatchArgumentsRoundTrip(t *testing.T) {
	alphabet := []string{"a", " ", `"`, `\`, "%", "&", "|", "<", ">", "^", "!", "(", ")", "\t", "é", "=", ",", ";"}
	var args []string
	// Every string of up to three symbols.
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		args = append(args, prefix)
		if n == 0 {
			return
		}
		for _, s := range alphabet {
			gen(prefix+s, n-1)
		}
	}
	gen("", 3)
	for _, a := range args {
		line, err := batchCommandLine(testCmdExe, `C:\n\npx.cmd`, []string{a, "next"})
		if err != nil {
			t.Fatalf("%q refused: %v", a, err)
		}
		if got := cmdReads(t, line); !equal(got, []string{a, "next"}) {
			t.Fatalf("%q: read back as %q from %s", a, got, line)
		}
	}
}

// cmdReads is what the program a batch file starts with %* reads from
// line: cmd.exe's view (after /s /c, the outer quotes removed; % expanded
// with every name defined; metacharacters outside quotes fail the test),
// then the C runtime's rules (parseArgv) on what follows the script's name.
func cmdReads(t *testing.T, line string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(line, " /s /c ")
	if !ok || len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
		t.Fatalf("not a /s /c line: %s", line)
	}
	rest = rest[1 : len(rest)-1]
	// Percent expansion, as cmd does on a command line: %NAME% is
	// replaced when NAME is defined (assume every name is), an empty name
	// leaves the first % and goes on from the second.
	var exp strings.Builder
	for i := 0; i < len(rest); i++ {
		if rest[i] != '%' {
			exp.WriteByte(rest[i])
			continue
		}
		j := strings.IndexByte(rest[i+1:], '%')
		if j < 0 {
			exp.WriteString(rest[i:])
			break
		}
		switch name := rest[i+1 : i+1+j]; {
		case name == "":
			exp.WriteByte('%')
		case name == "cd:~,":
			i += j + 1 // the empty substring
		default:
			t.Fatalf("%%%s%% would expand in %s", name, line)
		}
	}
	s := exp.String()
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			inQuote = !inQuote
		case !inQuote && strings.IndexByte("&|<>^()", c) >= 0:
			t.Fatalf("%q is outside quotes for cmd in %s", c, line)
		}
	}
	argv := parseArgv(s)
	if len(argv) == 0 {
		t.Fatalf("no script in %s", line)
	}
	return argv[1:]
}

// parseArgv splits a command line as the C runtime since 2008 does (what
// node.exe, which npx.cmd runs, reads): 2n backslashes and a quote are n
// backslashes and a delimiter, 2n+1 are n and a literal quote; within
// quotes "" is a quote. CommandLineToArgvW and Go's os.Args differ there:
// "" within quotes is a quote that also ends the quoting
// (docs/decisions/0048-windows-processes.md).
func parseArgv(s string) []string {
	var out []string
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return out
		}
		var cur strings.Builder
		inQuote := false
		for i < len(s) && (inQuote || (s[i] != ' ' && s[i] != '\t')) {
			switch s[i] {
			case '\\':
				n := 0
				for i < len(s) && s[i] == '\\' {
					n++
					i++
				}
				if i < len(s) && s[i] == '"' {
					cur.WriteString(strings.Repeat(`\`, n/2))
					if n%2 == 1 {
						cur.WriteByte('"')
						i++
					}
				} else {
					cur.WriteString(strings.Repeat(`\`, n))
				}
			case '"':
				if inQuote && i+1 < len(s) && s[i+1] == '"' {
					cur.WriteByte('"')
					i += 2
					continue
				}
				inQuote = !inQuote
				i++
			default:
				cur.WriteByte(s[i])
				i++
			}
		}
		out = append(out, cur.String())
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
