//go:build !hearth_resultcheck

package tool

// checkResults is set in builds tagged hearth_resultcheck (the end-to-end
// tests' hearthd): every result is then checked against its tool's output
// schema (Entry.checkingResults). Served builds do not pay for it.
const checkResults = false
