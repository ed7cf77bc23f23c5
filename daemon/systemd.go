package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/coreos/go-systemd/v22/activation"
	sd "github.com/coreos/go-systemd/v22/daemon"
	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/localsock"
)

// activated returns the listening socket systemd passed (socket activation),
// or nil when the daemon was not socket-activated. activation.Files unsets
// LISTEN_* so no child inherits them; the socket file stays systemd's.
func activated() (*localsock.Listener, error) {
	files := activation.Files(true)
	var ln *localsock.Listener
	for _, f := range files {
		if ln != nil {
			f.Close()
			continue
		}
		if l, err := localsock.Inherit(f); err == nil {
			ln = l
		}
	}
	if ln == nil && len(files) > 0 {
		return nil, fmt.Errorf("socket activation passed %d sockets but no Unix stream socket", len(files))
	}
	return ln, nil
}

// notify sends one sd_notify state; outside systemd it does nothing.
func (d *Daemon) notify(state string) {
	if _, err := sd.SdNotify(false, state); err != nil {
		d.log.Warn("sd_notify failed", zap.String("state", state), zap.Error(err))
	}
}

// watchdog pings systemd at half of WATCHDOG_USEC, but only while healthy()
// says the accept loop is working, so a wedged daemon is restarted, and keeps
// STATUS= current. It returns when ctx ends.
func (d *Daemon) watchdog(ctx context.Context, healthy func() bool) {
	interval, err := sd.SdWatchdogEnabled(false)
	if err != nil {
		d.log.Warn("reading the systemd watchdog settings failed", zap.Error(err))
	}
	tick := 5 * time.Second // STATUS= refresh when there is no watchdog
	if interval > 0 {
		tick = interval / 2
	}
	every(ctx, tick, func() bool {
		c := d.srv.Counters()
		d.notify(fmt.Sprintf("STATUS=serving %d clients; %d requests, %d errors since start", c.Connections, c.Requests, c.Errors))
		if interval > 0 && healthy() {
			d.notify(sd.SdNotifyWatchdog)
		}
		return true
	})
}
