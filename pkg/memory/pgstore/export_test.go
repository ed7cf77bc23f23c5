package pgstore

// SetProbeForTest turns the search's freshness probe on or off (for the
// benchmark that measures what it costs), and returns the previous setting.
func SetProbeForTest(on bool) bool {
	old := probeSearches
	probeSearches = on
	return old
}

// SchemaOfFormat10 is the schema of the first format, to build a database
// a release of format 1.0 would have left.
func SchemaOfFormat10() string { return schema }

// SetGraphProbeForTest turns the graph reads' freshness probe on or off, and
// returns the previous setting.
func SetGraphProbeForTest(on bool) bool {
	old := probeGraphReads
	probeGraphReads = on
	return old
}

// HoldGraphForTest keeps the store from applying graph changes until the
// returned function is called, so that a run of other daemons' changes
// reaches it as one catch-up.
func (s *Store) HoldGraphForTest() (release func()) {
	s.graphing.Lock()
	return s.graphing.Unlock
}

// HoldIndexForTest keeps the store from applying memory changes until the
// returned function is called: a daemon up but silent, as one whose server
// connection hangs.
func (s *Store) HoldIndexForTest() (release func()) {
	s.Indexing.Lock()
	return s.Indexing.Unlock
}
