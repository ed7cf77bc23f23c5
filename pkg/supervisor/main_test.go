//go:build linux

package supervisor

import (
	"os"
	"testing"
)

// The test binary doubles as the keeper (Options.KeeperPath), as hearthd
// does, and as a small daemon that the keeper tests kill (keeper_test.go).
func TestMain(m *testing.M) {
	KeeperMain()
	if os.Getenv(testDaemonEnv) != "" {
		os.Exit(testDaemon())
	}
	os.Exit(m.Run())
}
