// Package opener opens a URL for the user: the authorization page of a
// sign-in, in the browser. The command is the config's open_url, else the
// system's opener (xdg-open, open, the URL handler of Windows), and the
// environment variable HEARTH_OPEN_URL overrides both; the URL is its last
// argument. Tests sign in without a person by naming a command that follows
// the authorization server's redirects as a browser would.
//
// It is the one place besides the supervisor, the shim and install-service
// that starts a process (test/deps): the opener runs detached, in a session
// of its own, because the browser it starts must outlive it, which the
// supervisor, ending every child's group, would not allow.
package opener

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Env names the variable that overrides the configured command.
const Env = "HEARTH_OPEN_URL"

// Command is the command line (without the URL) that opens a URL: override
// (HEARTH_OPEN_URL) if set, else setting (open_url) if set, else goos's
// own opener.
func Command(setting, override, goos string) ([]string, error) {
	for _, s := range []struct{ what, v string }{{Env, override}, {"open_url", setting}} {
		if strings.TrimSpace(s.v) == "" {
			continue
		}
		argv, err := Split(s.v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
		return argv, nil
	}
	switch goos {
	case "darwin":
		return []string{"open"}, nil
	case "windows":
		// rundll32's URL handler takes the URL as one argument; cmd's start
		// would read & and ^ in it as its own.
		return []string{"rundll32", "url.dll,FileProtocolHandler"}, nil
	default:
		return []string{"xdg-open"}, nil
	}
}

// Split splits a command line into words as a POSIX shell would, without
// expanding anything: blanks separate words; '...' keeps everything; "..."
// keeps everything but \" \\ \$ \`; \ outside quotes keeps the next byte.
func Split(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in := false // a word is under way (an empty quoted word counts)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("an unclosed ' in the command")
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`an unclosed " in the command`)
			}
			in = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New(`a \ at the end of the command`)
			}
			i++
			w.WriteByte(s[i])
			in = true
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("an empty command")
	}
	return words, nil
}

// Wait bounds how long Open waits for the opener to exit.
var Wait = 30 * time.Second

// Open runs argv with url as its last argument, detached (its own session,
// so that a browser it starts outlives it and hearth), and waits for it to
// exit, at most Wait or until ctx ends. An opener that fails says so with
// the end of what it wrote to stderr; the URL itself is not repeated (it
// carries a state value).
func Open(ctx context.Context, argv []string, url string) error {
	if len(argv) == 0 {
		return errors.New("opener: no command")
	}
	cmd := exec.Command(argv[0], append(append([]string(nil), argv[1:]...), url)...)
	detach(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &tail{b: &stderr, max: 2048}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("opener %s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(Wait)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			msg := strings.TrimSpace(stderr.String())
			if msg != "" {
				return fmt.Errorf("opener %s: %v: %s", argv[0], err, msg)
			}
			return fmt.Errorf("opener %s: %w", argv[0], err)
		}
		return nil
	case <-t.C:
		return fmt.Errorf("opener %s did not exit within %s (it keeps running)", argv[0], Wait)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tail keeps the last max bytes written.
type tail struct {
	b   *bytes.Buffer
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.b.Write(p)
	if over := t.b.Len() - t.max; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}
