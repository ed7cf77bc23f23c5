package daemon

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// An upgrade installed in place of this daemon's executable hands over to
// it by itself, as `hearthd restart` would
// (docs/decisions/0050-upgrade-handover.md): the executable is looked at
// when a client connects, and on a slow timer for a daemon no client
// connects to.

// UpgradeCheck says whether a newer hearthd was installed in place of this
// daemon's executable: its path, or "" (upgrade.Watch.Check; an error says
// why a new file there is not run, logged once per file). Set by hearthd's
// main; nil: this daemon does not watch.
type UpgradeCheck func() (exe string, err error)

// upgradeEvery is the slow timer's period.
const upgradeEvery = time.Minute

// watchUpgrade checks for an upgrade whenever kick fires (a connection
// came) or upgradeEvery passes, one check at a time, until ctx ends or
// it has handed over.
func (d *Daemon) watchUpgrade(ctx context.Context, kick <-chan struct{}) {
	if d.opts.CheckUpgrade == nil {
		return
	}
	d.handover.mu.Lock()
	refusal := d.refusesHandOver()
	d.handover.mu.Unlock()
	if refusal != "" {
		d.log.Info("an upgrade of hearthd installed while this daemon runs is not handed over to", zap.String("why", refusal))
		return
	}
	tick := time.NewTicker(upgradeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.handingOver():
			return
		case <-kick:
		case <-tick.C:
		}
		exe, err := d.opts.CheckUpgrade()
		if err != nil {
			d.log.Warn("the executable this daemon started from was replaced by a file it will not hand over to; serving on", zap.Error(err))
			continue
		}
		if exe == "" {
			continue
		}
		_, stop, err := d.handOver(exe, "a new hearthd was installed")
		if err != nil {
			d.log.Warn("could not hand over to the new hearthd; serving on (it is not tried again until another is installed)", zap.String("exe", exe), zap.Error(err))
			continue
		}
		stop()
	}
}

// kickUpgrade asks watchUpgrade for a check, without waiting.
func kickUpgrade(kick chan<- struct{}) {
	select {
	case kick <- struct{}{}:
	default:
	}
}
