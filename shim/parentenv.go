package shim

// ParentEnv is the environment the shim's parent (the client) started
// with, and whether the system let the shim read it (parentEnv, one file
// per system). portable true (pkg/portable's NoParentEnv) leaves it
// unknown, as on a system that gives no way to read it: `hearth run` then
// passes only the variables --env or HEARTH_RUN_ENV names (decision 0036),
// the documented fallback, which CI thus tests on Linux
// (docs/decisions/0044-platforms.md).
func ParentEnv(portable bool) ([]string, bool) {
	if portable {
		return nil, false
	}
	return parentEnv()
}

// parentEnv reads the parent's environment where the system tells it (Linux's
// /proc, macOS's kern.procargs2: parentenv_linux.go, parentenv_darwin.go set
// it); elsewhere it is unknown, and only HEARTH_RUN_ENV names what the entry
// set.
var parentEnv = func() ([]string, bool) { return nil, false }
