//go:build !linux && !darwin

package atomicfile

// exchangeNames: no atomic exchange of two names is used on this system
// (Windows has none; the BSDs' are not wired), so ReplaceIfUnchanged
// compares again right before an ordinary rename. See replace.go.
func exchangeNames(a, b string) error { return errNoExchange }

// exchangeNever: see neverExchange.
const exchangeNever = true
