package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/owner"
	"github.com/hearth-mcp/hearth/pkg/portable"
	"github.com/hearth-mcp/hearth/pkg/version"
	"github.com/hearth-mcp/hearth/shim"
)

// exitOwned is the exit code of a `hearthd serve` that found its data
// directory owned by another live daemon (the message names it).
const exitOwned = 3

// ownerWait bounds how long a starting owner is waited for before a stdio
// client decides it cannot attach.
const ownerWait = 5 * time.Second

// relayIfServed relays a stdio client to the daemon that serves home, if
// one does (waiting a little for one that is starting).
func relayIfServed(home string, log *zap.Logger) (relayed bool, code int) {
	deadline := time.Now().Add(ownerWait)
	for {
		rec, state, err := owner.Find(home)
		if err != nil {
			log.Warn("could not look for the data directory's owner", zap.String("home", home), zap.Error(err))
			return false, 0
		}
		switch {
		case state == owner.Serving && rec.Socket != "":
			return true, relay(home, rec, log)
		case state == owner.Starting && time.Now().Before(deadline):
			time.Sleep(20 * time.Millisecond)
		default:
			return false, 0
		}
	}
}

// claim makes this process the owner of home, the only one that opens its
// stores (decision 0015). A `hearthd stdio` that finds another daemon
// serving home (or starting to: it raced relayIfServed) is relayed to it,
// and relayed reports the exit code. Otherwise lock is the held ownership,
// or code is the exit code of a refusal already reported.
func claim(mode daemon.Mode, home string, log *zap.Logger) (lock *owner.Lock, relayed bool, code int) {
	for attempt := 0; ; attempt++ {
		l, err := owner.Acquire(home)
		if err == nil {
			if l.Narrowed != 0 {
				log.Warn("the data directory was open to other users; narrowed it to 0700", zap.String("home", home), zap.String("was", fmt.Sprintf("%#o", l.Narrowed)))
			}
			return l, false, 0
		}
		var held *owner.HeldError
		if !errors.As(err, &held) {
			log.Error("hearthd could not start", zap.Error(err))
			fmt.Fprintln(os.Stderr, "hearthd:", err)
			return nil, false, 1
		}
		if mode == daemon.ModeStdio && attempt < 3 && (held.State == owner.Starting || held.Record.Socket != "") {
			if relayed, code := relayIfServed(home, log); relayed {
				return nil, true, code
			}
			continue // the owner went away meanwhile: try to own home again
		}
		msg := held.Error() + "; "
		switch {
		case held.Record.Socket != "":
			msg += "its clients attach there (the shim `hearth` and `hearthd stdio` find it), so there is nothing to start"
		default:
			msg += "stop it, or set HEARTH_HOME to use another data directory"
		}
		log.Error("the data directory has another owner", zap.String("home", home), zap.Int("owner_pid", held.Record.PID),
			zap.String("owner_socket", held.Record.Socket), zap.String("owner_mode", held.Record.Mode))
		fmt.Fprintln(os.Stderr, "hearthd:", msg)
		return nil, false, exitOwned
	}
}

// relay serves a stdio client through the daemon that owns home, exactly as
// the shim does: same tools, same data, one owner.
func relay(home string, rec owner.Record, log *zap.Logger) int {
	log.Info("relaying stdio to the data directory's owner", zap.String("home", home),
		zap.Int("owner_pid", rec.PID), zap.String("socket", rec.Socket), zap.String("owner_version", rec.Version))
	return shim.Run(shim.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Relay: portable.Read(os.Getenv).ShimRelay})
}

// publish is the daemon's OnServing hook: it records in the data directory
// where this owner serves.
func publish(lock *owner.Lock, started time.Time) func(daemon.Serving) error {
	return func(s daemon.Serving) error {
		return lock.Publish(owner.Record{Mode: string(s.Mode), Socket: s.Socket, Version: version.Tooling(), Started: started, Ready: s.ReadyFile})
	}
}
