package guard_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hearth-mcp/hearth/pkg/guard"
)

// The daemon's first step, before any store is opened: a refusal becomes
// the process's exit code, a pass is logged.
func ExampleCheck() {
	dir, _ := os.MkdirTemp("", "hearth-example")
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")

	exitCode := func() int {
		res, err := guard.Check(home, "0.1.0+abc")
		var refusal *guard.Error
		if errors.As(err, &refusal) {
			fmt.Println("refused:", refusal.Reason, "exit", refusal.ExitCode)
			return refusal.ExitCode
		}
		if err != nil {
			return 1
		}
		fmt.Println("passed: created", res.Created, "format", res.Format)
		return 0
	}
	exitCode()
	exitCode()
	os.WriteFile(filepath.Join(home, guard.MarkerName), []byte("2.0\n2.0.0\n"), 0o600)
	exitCode()
	// Output:
	// passed: created true format 1.0
	// passed: created false format 1.0
	// refused: format_mismatch exit 78
}
