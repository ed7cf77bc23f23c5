//go:build !linux && !darwin

package shim

// ParentEnv is unknown without /proc or kern.procargs2: only
// HEARTH_RUN_ENV names what the entry set.
func ParentEnv() ([]string, bool) { return nil, false }
