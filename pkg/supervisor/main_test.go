//go:build linux

package supervisor

import (
	"github.com/hearth-mcp/hearth/pkg/keeper"

	"os"
	"testing"
)

// The test binary doubles as the keeper (Options.KeeperPath), as hearthd
// does, and as a small daemon that the keeper tests kill (keeper_test.go).
func TestMain(m *testing.M) {
	keeper.Main()
	if os.Getenv(testDaemonEnv) != "" {
		os.Exit(testDaemon())
	}
	os.Exit(m.Run())
}
