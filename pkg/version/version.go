// Package version names this build of hearth. Release builds set Commit
// (and may set Version) with -ldflags "-X
// github.com/hearth-mcp/hearth/pkg/version.Commit=<sha>" (the Justfile and
// tools/release do); a plain `go install` reports "dev".
package version

// Version is the release version of hearth; a variable so a release build
// can stamp it from its tag.
var Version = "0.1.0"

// Commit is the source revision, set at link time.
var Commit = "dev"

// Tooling is the toolingVersion every tool definition carries: version+commit.
func Tooling() string { return Version + "+" + Commit }
