//go:build !linux

package shim

// ParentEnv is unknown without /proc: only HEARTH_RUN_ENV names what the
// entry set.
func ParentEnv() ([]string, bool) { return nil, false }
