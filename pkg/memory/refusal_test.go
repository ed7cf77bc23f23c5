package memory

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/guard"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// An engine's refusal of its database is the guard's refusal too, with the
// guard's exit code, and stays the engine's error (ErrUnavailable, message).
func TestFormatRefusalIsTheGuards(t *testing.T) {
	for reason, code := range map[string]int{store.ReasonNoMarker: guard.ExitDataErr, store.ReasonFormatMismatch: guard.ExitConfig} {
		err := fmt.Errorf("%w: PostgreSQL store db: %w", store.ErrUnavailable, &store.FormatError{Reason: reason, Where: "db", Found: "9.9", Want: "1.1", Message: "refused"})
		got := guardRefusal(err)
		var ge *guard.Error
		if !errors.As(got, &ge) || ge.ExitCode != code || ge.Reason != reason || ge.Home != "db" || ge.Found != "9.9" || ge.Message != "refused" {
			t.Errorf("%s: %#v", reason, ge)
		}
		if !errors.Is(got, store.ErrUnavailable) || got.Error() != err.Error() {
			t.Errorf("%s: the engine's error is lost: %v", reason, got)
		}
	}
	plain := errors.New("connection refused")
	if guardRefusal(plain) != plain || guardRefusal(nil) != nil {
		t.Error("an error that is no refusal changed")
	}
}
