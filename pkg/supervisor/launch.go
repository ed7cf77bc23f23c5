package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"unicode"
)

// command is the Cmd that runs name with args: exec resolves name through
// PATH, and a failure to find it is Start's error. launch_windows.go sets
// Windows's in its init.
var command = func(ctx context.Context, name string, args []string, dir string) (*exec.Cmd, error) {
	return exec.CommandContext(ctx, name, args...), nil
}

// How a command is started on Windows (docs/decisions/0048-windows-processes.md).
// These functions are pure and portable, so that they are tested on every
// system; only launch_windows.go calls them.
//
// CreateProcess runs an .exe or .com itself. A batch file (npx.cmd, the
// usual MCP launcher there) is run by cmd.exe, which parses the command line
// with its own rules, not the CommandLineToArgvW rules Go's os/exec quotes
// for: left to CreateProcess's implicit `cmd.exe /c`, an argument holding
// `"`, `&`, `|`, `<`, `>`, `^` or `%` could run another command (the
// "BatBadBut" class). So a batch file is run through cmd.exe explicitly,
// with a command line built here, and an argument that cannot be made safe
// is refused.

// ErrBatchArgument is the error of an argument a batch file cannot be
// given safely.
var ErrBatchArgument = errors.New("cannot be passed safely to a batch file")

// windowsLaunch is how to start the program at resolved (a path that
// exec.LookPath found, with its extension) with args: cmdLine is empty when
// the program is started directly with args; otherwise the program to
// start is cmdExe with the whole command line cmdLine (its Args ignored).
func windowsLaunch(resolved string, args []string, cmdExe string) (program, cmdLine string, err error) {
	switch strings.ToLower(windowsExt(resolved)) {
	case ".exe", ".com":
		return resolved, "", nil
	case ".bat", ".cmd":
		line, err := batchCommandLine(cmdExe, resolved, args)
		if err != nil {
			return "", "", err
		}
		return cmdExe, line, nil
	case "":
		return "", "", fmt.Errorf("%s: a program without an extension cannot be started on Windows (name its .exe, .com, .cmd or .bat)", resolved)
	default:
		return "", "", fmt.Errorf("%s: only .exe, .com, .cmd and .bat files are started; run a script through its interpreter", resolved)
	}
}

// windowsExt is the extension of a Windows path's last element ("" if none).
func windowsExt(path string) string {
	dot := strings.LastIndexByte(path, '.')
	if dot < 0 || dot < strings.LastIndexAny(path, `\/:`) {
		return ""
	}
	return path[dot:]
}

// batchCommandLine is cmd.exe's command line that runs the batch file
// script with args, each reaching the script as one argument (%1, %2, …)
// and, through its %*, the program it runs as that argument:
//
//	"cmdExe" /d /e:ON /v:OFF /s /c ""script" arg1 "arg 2""
//
// /d: no AutoRun commands; /v:OFF: no !delayed! expansion; /e:ON: command
// extensions, which the % escape below needs; /s /c: the outer quotes are
// removed and the rest runs as it stands. An argument with anything but
// letters, digits and #$*+-./:?@\_ is quoted; inside the quotes a `"` is
// doubled (cmd's quoting toggles twice, so `&|<>^()` stay inside quotes for
// cmd, and a program built with the C runtime since 2008, node.exe among
// them, reads `""` within quotes as one `"`; CommandLineToArgvW and Go's
// os.Args read it as a `"` that ends the quoting, so a Go program run
// through a batch file misreads an argument holding a quote: decision
// 0048), backslashes before a `"` are doubled, and every `%` is
// written `%%cd:~,%` (the expansion of an empty substring of %cd% comes
// between it and what follows, so no %NAME% is expanded). This is the
// scheme Rust's standard library adopted after CVE-2024-24576. It holds
// for npm's shims too, whose `"%NODE_EXE%" "%NPX_CLI_JS%" %*` line cmd
// parses again: %* is this text, with the same quotes, and what %*
// substitutes is not expanded again.
//
// Refused (ErrBatchArgument): NUL, CR and LF in an argument (cmd ends the
// command at a line break), and a script path holding `"` or `%` or ending
// in a backslash.
func batchCommandLine(cmdExe, script string, args []string) (string, error) {
	if strings.ContainsAny(script, "\"%\x00\r\n") || strings.HasSuffix(script, `\`) {
		return "", fmt.Errorf("batch file path %q %w", script, ErrBatchArgument)
	}
	if strings.ContainsAny(cmdExe, "\"\x00\r\n") {
		return "", fmt.Errorf("command interpreter path %q %w", cmdExe, ErrBatchArgument)
	}
	var b strings.Builder
	b.WriteString(`"` + cmdExe + `" /d /e:ON /v:OFF /s /c ""` + script + `"`)
	for i, a := range args {
		if strings.ContainsAny(a, "\x00\r\n") {
			return "", fmt.Errorf("argument %d (%q) holds a NUL or a line break, which %w", i+1, a, ErrBatchArgument)
		}
		b.WriteByte(' ')
		appendBatchArg(&b, a)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// appendBatchArg writes one argument as batchCommandLine says.
func appendBatchArg(b *strings.Builder, a string) {
	quote := a == "" || strings.HasSuffix(a, `\`) // an empty argument is kept; a trailing \ must not escape the closing quote
	for _, r := range a {
		if r < 0x80 && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(`#$*+-./:?@\_`, r)) || unicode.IsControl(r) {
			quote = true
		}
	}
	if quote {
		b.WriteByte('"')
	}
	backslashes := 0
	for _, r := range a {
		switch r {
		case '\\':
			backslashes++
			b.WriteRune(r)
			continue
		case '"':
			b.WriteString(strings.Repeat(`\`, backslashes)) // 2n backslashes, then the doubled quote
			b.WriteByte('"')
		case '%':
			b.WriteString("%%cd:~,")
		}
		backslashes = 0
		b.WriteRune(r)
	}
	if quote {
		b.WriteString(strings.Repeat(`\`, backslashes))
		b.WriteByte('"')
	}
}
