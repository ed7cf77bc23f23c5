//go:build !linux && !darwin

package shim

// parentEnv is unknown without /proc or kern.procargs2: only
// HEARTH_RUN_ENV names what the entry set.
func parentEnv() ([]string, bool) { return nil, false }
