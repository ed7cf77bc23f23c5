//go:build !linux && !darwin && !windows

// hearth builds for Linux, macOS and Windows only
// (docs/decisions/0069-platform-files-and-switches.md). On any other
// system this file's package clause differs from the rest of the
// directory's, so the go command stops at loading with one error that
// names the reason, before it compiles a library that has no file for
// the system.
package hearth_builds_only_for_linux_darwin_and_windows
