package shim

import (
	"os"

	"github.com/hearth-mcp/hearth/pkg/portable"
)

// ParentEnv is the environment the shim's parent (the client) started
// with, and whether the system let the shim read it (parentEnv, one file
// per system). HEARTH_PORTABLE=1 leaves it unknown, as on a system that
// gives no way to read it: `hearth run` then passes only the variables
// --env or HEARTH_RUN_ENV names (decision 0036), the documented fallback,
// which CI thus tests on Linux (docs/decisions/0044-platforms.md).
func ParentEnv() ([]string, bool) {
	if portable.Selected(os.Getenv) {
		return nil, false
	}
	return parentEnv()
}
