//go:build !unix && !windows

package endpoint

// userRuntimeDir: only Unix systems have a per-user runtime directory.
func userRuntimeDir() string { return "" }

// userHome: the account database is a Unix file; elsewhere every data
// directory gets a socket name of its own.
func userHome() string { return "" }

// Account: the account database is a Unix file; elsewhere the environment's
// USER and SHELL stand.
func Account() (name, shell string) { return "", "" }
