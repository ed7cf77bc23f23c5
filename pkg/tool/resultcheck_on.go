//go:build hearth_resultcheck

package tool

// checkResults: see resultcheck_off.go.
const checkResults = true
