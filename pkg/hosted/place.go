package hosted

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WorkDir is where an upstream of spec runs for a client in clientDir: the
// config's cwd when it sets one, else the client's directory (directory and
// client sharing, as a direct spawn would), else the home directory (global
// sharing, or a client that gave no directory). docs/decisions/0032.
func (s Spec) WorkDir(clientDir string) string {
	if s.Dir != "" {
		return s.Dir
	}
	if !s.perUser() && clientDir != "" {
		return filepath.Clean(clientDir)
	}
	home, _ := os.UserHomeDir()
	return home
}

// CheckPlace refuses a spec that would run in another place than the one
// its entry names files in: global sharing without a cwd runs the upstream
// in the home directory, whichever window started it, so a command that is
// not an absolute path, or an argument that is a relative path (RelativeArg),
// would mean something else there than in the client's directory. The
// error says why and what to do; the client gets it as the -32010 refusal.
func (s Spec) CheckPlace(clientDir string) error {
	if !s.perUser() || s.Dir != "" || s.IsRemote() {
		return nil
	}
	where := s.WorkDir(clientDir)
	fix := "use an absolute path, or share by directory (hearth run --share directory, or sharing = \"directory\" in the config)"
	if !filepath.IsAbs(s.Command) {
		return fmt.Errorf("global sharing runs %s in %s, not in your directory; its command %q is neither an absolute path nor found on PATH: %s",
			s.Label(), where, s.Command, fix)
	}
	for _, a := range s.Args {
		if RelativeArg(a, clientDir) {
			return fmt.Errorf("global sharing runs %s in %s, not in your directory; its argument %q is relative to your directory %s: %s",
				s.Label(), where, a, clientDir, fix)
		}
	}
	return nil
}

// RelativeArg reports whether an argument names a path relative to the
// client's directory. The rule (docs/architecture.md, "Hosted servers"):
// the argument's value is the argument itself, or for an option written
// -NAME=VALUE or --NAME=VALUE the VALUE (another option is no path); a
// value is relative when it is ".", "..", starts with "./" or "../", or is
// not absolute and names a file or directory that exists in clientDir.
// "~/..." and absolute paths are not relative.
func RelativeArg(arg, clientDir string) bool {
	v := arg
	if strings.HasPrefix(arg, "-") {
		_, after, ok := strings.Cut(arg, "=")
		if !ok {
			return false
		}
		v = after
	}
	switch {
	case v == "" || filepath.IsAbs(v) || strings.HasPrefix(v, "~"):
		return false
	case v == "." || v == ".." || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../"):
		return true
	case clientDir == "":
		return false
	}
	_, err := os.Lstat(filepath.Join(clientDir, v))
	return err == nil
}

// perUser: one instance serves the user wherever its clients are (global
// and exclusive sharing), run in the home directory unless a cwd is set.
func (s Spec) perUser() bool { return s.Sharing == Global || s.Sharing == Exclusive }
