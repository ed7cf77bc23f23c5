// Package portable reads the one switch that makes hearth on Linux use the
// mechanisms it uses on systems without Linux's own (docs/decisions/0044-platforms.md):
// the shim relays frames instead of handing its client's stdio over, a
// hosted upstream's keeper learns of the daemon's death from its death
// socket alone, and `hearth run` does not read its client's environment
// from /proc. CI runs the end-to-end tests with it set, so the paths macOS
// and other Unixes take are tested where CI runs.
package portable

// Env is the switch's variable: "1" selects the portable mechanisms.
const Env = "HEARTH_PORTABLE"

// Selected reports whether the environment read by getenv selects them.
func Selected(getenv func(string) string) bool { return getenv(Env) == "1" }
