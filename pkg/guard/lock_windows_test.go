//go:build windows

package guard

// On Windows the guard locks a hidden file in home, which a refused check
// leaves behind; the untouched-home tests ignore it there.
const lockLeavesFile = true
