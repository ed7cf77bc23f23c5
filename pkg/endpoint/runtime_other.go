//go:build !unix

package endpoint

// userRuntimeDir: only Unix systems have a per-user runtime directory.
func userRuntimeDir() string { return "" }
