// Package portable is the one place that reads hearth's portability
// switches, the variables that make hearth on Linux use the mechanisms it
// uses on systems without Linux's own (docs/decisions/0044-platforms.md).
// The mains (hearthd, hearth) read them with Read and hand what they say to
// the libraries as options; no library reads them itself. CI runs the
// end-to-end tests with HEARTH_PORTABLE set, so the paths macOS and other
// Unixes take are tested where CI runs.
package portable

// The switches' variables.
const (
	// Env, "1", selects every portable mechanism at once.
	Env = "HEARTH_PORTABLE"
	// KeeperEnv, "1", makes hosted upstreams' keepers portable alone: they
	// learn of the daemon's death from their death socket, and track the
	// upstream's descendants from the process table, as where there is no
	// parent-death signal and no subreaper.
	KeeperEnv = "HEARTH_KEEPER_PORTABLE"
	// ShimRelayEnv, any value, makes the shim relay its client's frames
	// instead of handing its stdin and stdout to the daemon.
	ShimRelayEnv = "HEARTH_SHIM_RELAY"
)

// Switches are what the variables select.
type Switches struct {
	// All: Env selected every portable mechanism at once.
	All bool
	// ShimRelay: the shim relays frames instead of handing its client's
	// stdio over (ShimRelayEnv, or Env).
	ShimRelay bool
	// Keeper: a keeper learns of the daemon's death from its death socket
	// alone and tracks descendants instead of being a subreaper
	// (KeeperEnv, or Env).
	Keeper bool
	// NoParentEnv: `hearth run` does not read its client's environment
	// from the system, as where the system gives no way to (Env).
	NoParentEnv bool
}

// Read reads the switches from the environment getenv reads.
func Read(getenv func(string) string) Switches {
	all := getenv(Env) == "1"
	return Switches{
		All:         all,
		ShimRelay:   all || getenv(ShimRelayEnv) != "",
		Keeper:      all || getenv(KeeperEnv) == "1",
		NoParentEnv: all,
	}
}

// Passed reports whether name is one of the switches' variables, which an
// autostarted daemon is given from the shim's environment, so that a
// portable test run stays portable in the daemon it starts.
func Passed(name string) bool { return name == Env || name == KeeperEnv }
