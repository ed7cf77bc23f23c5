package pgstore

// SetProbeForTest turns the search's freshness probe on or off (for the
// benchmark that measures what it costs), and returns the previous setting.
func SetProbeForTest(on bool) bool {
	old := probeSearches
	probeSearches = on
	return old
}
