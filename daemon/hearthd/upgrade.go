package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/upgrade"
	"github.com/hearth-mcp/hearth/pkg/version"
)

// probeTimeout bounds a new executable's `version`, and probeOutput what
// it may print: a hearthd prints one short line.
const (
	probeTimeout = 10 * time.Second
	probeOutput  = 4096
)

// probeVersion runs path's `version` as the daemon would run its
// successor (its environment, no stdin), bounded in time and in what it
// may print: one that prints more is stopped then, long before its time
// is up, and the daemon holds no more of it than the bound.
func probeVersion(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version")
	cmd.WaitDelay = time.Second
	out, err := runCapped(cmd, cancel, probeOutput, false)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "", fmt.Errorf("no answer within %s", probeTimeout)
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// upgradeCheck watches the file this daemon started from
// (docs/decisions/0050-upgrade-handover.md), by the path it was started
// as, never /proc/self/exe, which names the running image (" (deleted)"
// once replaced). nil when the setting is off or the path is unknown.
func upgradeCheck(on bool, log *zap.Logger) daemon.UpgradeCheck {
	if !on {
		return nil
	}
	path, running, err := ownExecutable()
	var w *upgrade.Watch
	if err == nil {
		w, err = upgrade.NewWatch(path, running, version.Tooling(), probeVersion)
	}
	if err != nil {
		log.Warn("hearthd cannot watch its executable; an upgrade takes hearthd restart", zap.Error(err))
		return nil
	}
	return w.Check
}

// ownExecutable is the path this daemon's executable was started from (the
// one a hand-over starts and an upgrade is watched at) and the name of the
// file it runs: on Linux /proc/self/exe, which opens the running file
// whatever the path holds now.
func ownExecutable() (path, running string, err error) {
	path, err = os.Executable()
	running = path
	if err == nil && runtime.GOOS == "linux" {
		// os.Executable reads /proc/self/exe's link: the path the file was
		// started from, marked if that file was replaced since.
		path = strings.TrimSuffix(path, " (deleted)")
		running = "/proc/self/exe"
	}
	return path, running, err
}
