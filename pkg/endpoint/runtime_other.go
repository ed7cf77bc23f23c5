//go:build !unix

package endpoint

// userRuntimeDir: only Unix systems have a per-user runtime directory.
func userRuntimeDir() string { return "" }

// userHome: the account database is a Unix file; elsewhere every data
// directory gets a socket name of its own.
func userHome() string { return "" }
