package daemon

import (
	"io"
	"os"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// Options are everything a Daemon is built with; nothing is set on it
// afterwards.
type Options struct {
	Config Config
	Log    *zap.Logger
	// Env is what the families are opened with (tool.Env.Home is the data
	// directory).
	Env tool.Env
	// Children is the daemon's one subprocess supervisor, the one Families
	// handed the families that start processes (nil: New makes one). On
	// shutdown the daemon kills whatever it still runs.
	Children *supervisor.Supervisor
	// Openers open the tool families, in order.
	Openers []tool.Opener
	// Stdin and Stdout are the stdio endpoint (nil: os.Stdin, os.Stdout).
	Stdin  io.ReadCloser
	Stdout io.Writer
	// OnServing, when set, is called once the daemon knows where it serves,
	// before it announces readiness: the owner records it in the data
	// directory so every client finds this daemon. An error stops the
	// daemon.
	OnServing func(Serving) error
	// StdioListens: a stdio daemon also serves the socket (when it owns its
	// data directory and no other daemon holds the socket).
	StdioListens bool
	// StartSuccessor starts the daemon a planned restart hands over to
	// (handover.go); nil: this daemon does not hand over.
	StartSuccessor Successor
	// Executable is the path this daemon's executable was started from,
	// the one program a hand-over starts (handover.go: never one a
	// request names); "" when unknown, and `hearthd restart` is refused.
	Executable string
	// OwnerLock is the data directory's owner lock file, handed to the
	// successor with the upstreams (nil: none).
	OwnerLock *os.File
	// CheckUpgrade, when set, makes a newer hearthd installed in place of
	// this one's executable its successor (upgrade.go).
	CheckUpgrade UpgradeCheck
	// Handed are the hosted upstreams a predecessor handed over, adopted
	// by the new daemon's hosted servers.
	Handed []hosted.Handed
	// HomeWhy says why the data directory is the one it is
	// (endpoint.Place.Why), for daemon_status; Unfollowed lists what this
	// process's XDG variables name that hearth does not use
	// (endpoint.Unfollowed).
	HomeWhy    string
	Unfollowed []string
}

// Serving is where a daemon serves, told to Options.OnServing.
type Serving struct {
	Mode Mode
	// Socket is the socket's path ("" for a stdio daemon without one).
	Socket string
	// ReadyFile is the readiness file the daemon writes once serving ("" when
	// none; a socket systemd passes moves the default one beside it).
	ReadyFile string
}
