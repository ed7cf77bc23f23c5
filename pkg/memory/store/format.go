package store

// The reasons an engine refuses a database's format (FormatError.Reason).
// They are the version guard's reasons for a data directory, so hearthd
// answers both alike.
const (
	ReasonNoMarker       = "no_marker"       // hearth data, no format marker
	ReasonFormatMismatch = "format_mismatch" // a format this build does not read
)

// FormatError is an engine's refusal of a database a daemon must not serve
// (a server's database, which has a format marker of its own): its data is
// in another format, or carries no marker. Nothing was changed. pkg/memory
// turns it into the version guard's refusal, so hearthd exits with the
// guard's code.
type FormatError struct {
	Reason  string // ReasonNoMarker or ReasonFormatMismatch
	Where   string // the database, without credentials
	Found   string // the format found ("" without a marker)
	Want    string // the format this build reads
	Message string // what happened and what to do, for the user
}

func (e *FormatError) Error() string { return e.Message }
