// Command hearthd is the hearth daemon: one warm MCP backend per user.
//
//	hearthd                 serve on MCP_ENDPOINT (stdio unless set to socket)
//	hearthd serve           serve on the Unix socket
//	hearthd stdio           serve one client on stdin/stdout
//	hearthd status          show the serving daemon, its clients and hosted servers
//	hearthd restart         replace the serving daemon, handing over its hosted servers
//	hearthd servers restart|stop NAME
//	                        restart or stop a hosted server (hearth run)
//	hearthd sweep [--kill]  list (and end) the MCP servers clients left behind
//	hearthd ui              open the status page in the browser
//	hearthd doctor [--json] exercise each mechanism of this system hearth relies on
//	hearthd memory import FILE.jsonl | export
//	                        the official memory server's file into and out of the memory graph
//	hearthd login|logout NAME
//	                        sign in to (or out of) a remote server; the daemon holds its tokens
//	hearthd secret set|list|rm NAME
//	                        the stored secrets ${secret:NAME} names (set reads stdin)
//	hearthd adopt [--write | --undo] [--secrets] [--only NAME,...] [--except NAME,...] [--share MODE] [--project DIR]
//	                        move the MCP servers of the user's clients behind hearth
//	hearthd install-service write and enable the systemd user units
//	hearthd version         print the version
//
// Settings come from the config file ($HEARTH_CONFIG, else
// ~/.config/hearth/config.toml), read at start and on SIGHUP, and the
// daemon's own environment, which overrides it; docs/reference.md lists them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/guard"
	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/keeper"
	"github.com/hearth-mcp/hearth/pkg/memory"
	"github.com/hearth-mcp/hearth/pkg/owner"
	"github.com/hearth-mcp/hearth/pkg/portable"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/version"
	"github.com/hearth-mcp/hearth/pkg/workspace"
)

const usage = `usage: hearthd [command]

commands:
  (none)    serve on MCP_ENDPOINT: "stdio" (the default) or "socket"
  serve     serve every client of this user on the Unix socket
  stdio     serve one client on stdin/stdout; exits when stdin closes
  validate <path|-> [--schema NAME]
            validate one JSON file against the schema catalog, without a daemon
            (exit 0 valid, 1 invalid, 2 unreadable or no schema to validate against)
  migrate [--adopt]
            convert the data in $HEARTH_HOME to this build's format (or adopt
            data that has no format marker); back it up first
  index-worker --repo DIR --out FILE ...
            build one code index (run by the daemon for index_build, not by hand)
  memory import [--workspace NAME] FILE.jsonl
            import the official memory server's JSONL file (its MEMORY_FILE_PATH) into
            the memory graph, all or nothing; through the daemon when one serves
  memory export [--workspace NAME] [-o FILE]
            write the memory graph in that format (to stdout without -o)
  status [--json] [NAME]
            show the daemon serving this user's data directory, its clients
            and per-tool counts (exit 0 serving, 1 none serves), and how many
            servers of each MCP client config go through hearth; and the hosted
            servers (hearth run): sharing, key, state, pid, clients, memory;
            with NAME, only that hosted server's instances
  reload    the serving daemon reads its config file again (as SIGHUP does);
            exit 1 with the reason, the file's line, when it did not apply
  stop      stop the daemon serving this user's data directory, as SIGTERM does
            (in-flight calls drain), and wait for it to exit
  restart   start a new daemon (this hearthd, e.g. one just installed) in place
            of the serving one, which hands it its running hosted servers
  servers [list] [--json]
            list every hosted server: state, clients, instances and what
            tells each instance apart (directory, variable names, client shape)
  servers restart|stop|forget NAME
            restart a hosted server (clearing a failure), stop it for good, or
            drop its catalog entry; NAME is the name your client's entry gives
            it, its [servers.NAME], what it runs, or a key prefix
  ui [--print]
            open the daemon's status page in your browser (a one-time link, through
            the open_url setting's command: HEARTH_OPEN_URL, else the system's
            opener); --print prints the link instead
  sweep [--kill] [--grace 5s] [--json] [--session SID]...
            list the stdio MCP servers their clients left behind on this account
            (the client gone, the server's stdin a pipe or socket nobody can write);
            --kill ends each whole tree (SIGTERM, SIGKILL after the grace). Never
            hearth's own servers, a live client's, or another user's processes
  doctor [--json]
            exercise, for real, each mechanism of this system hearth relies on
            (the socket or pipe and its peer check, the shim, the keeper, the
            client's environment, file replacement, the service entry, the data
            directory's lock, file ownership) and say what works; exit 1 when
            something fails: send --json's output with your report
  login NAME [--print]
            sign in to the remote server NAME (hearth run --url, or a [servers.NAME]
            with a url): the daemon holds its tokens; the sign-in page opens with
            the open_url setting's command (--print prints its link instead)
  logout NAME
            forget the remote server's tokens: its next call needs a sign-in
  secret set NAME | secret list | secret rm NAME
            the stored secrets that env and headers values name as ${secret:NAME};
            set reads the value from stdin, never from an argument
  adopt [--write | --undo] [--secrets] [--only NAME[,NAME]] [--except NAME[,NAME]]
        [--share MODE | --share NAME=MODE[,...]] [--project DIR]... [--command PATH]
            move the stdio MCP servers of your clients' configs (Claude Code,
            Claude Desktop, Cursor, VS Code) behind hearth: without --write, show
            the diffs and a table and change nothing; --write applies them with a
            backup beside each file; --undo restores from those backups
  install-service [--dry-run]
            write the systemd user units (and enable the socket if systemctl --user works)
  version   print the version and exit
  help      print this help

The data directory is ~/.local/share/hearth unless HEARTH_HOME is set, and the config
file ~/.config/hearth/config.toml unless HEARTH_CONFIG is set (XDG_DATA_HOME and
XDG_CONFIG_HOME are not consulted: one daemon per user, whichever client starts it).
A new daemon listens on hearthd.sock in $XDG_RUNTIME_DIR/hearth (else /run/user/<uid>/hearth,
else /tmp/hearth-<uid>) unless MCP_SOCKET_PATH is set; for any other data directory (a
HEARTH_HOME, or a HOME that is not your account's home directory) the name is
hearthd-<hash>.sock. Clients find a running daemon through the data directory, whatever
socket their own environment names. See docs/reference.md for every variable.
`

func main() {
	keeper.Main() // started as a hosted upstream's keeper: runs it and exits
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "":
		switch ep := os.Getenv("MCP_ENDPOINT"); ep {
		case "", "stdio":
			return serve(daemon.ModeStdio)
		case "socket":
			return serve(daemon.ModeSocket)
		default:
			fmt.Fprintf(os.Stderr, "hearthd: MCP_ENDPOINT=%q: want \"stdio\" or \"socket\"\n", ep)
			return 2
		}
	case "serve":
		return serve(daemon.ModeSocket)
	case "stdio":
		return serve(daemon.ModeStdio)
	case "validate":
		settings, err := config.Load(os.Getenv)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hearthd validate:", err)
			return exitIO
		}
		return validateCmd(args[1:], os.Stdin, os.Stdout, os.Stderr, settings.Getenv)
	case "migrate":
		return migrate(args[1:])
	case workspace.WorkerCommand:
		// The daemon runs its own binary as the index builder (index_build).
		return indexWorker(args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "status":
		return statusCmd(args[1:], os.Stdout, os.Stderr, os.Getenv)
	case "memory":
		return memoryCmd(args[1:], os.Stdout, os.Stderr)
	case "servers":
		return serversCmd(args[1:], os.Stdout, os.Stderr, os.Getenv)
	case "reload":
		return reloadCmd(args[1:], os.Stdout, os.Stderr, os.Getenv)
	case "ui":
		return uiCmd(args[1:], os.Stdout, os.Stderr, os.Getenv)
	case "sweep":
		return sweepCmd(args[1:], os.Stdout, os.Stderr)
	case "doctor":
		return doctorCmd(args[1:], os.Stdout, os.Stderr)
	case doctorUpstream:
		return doctorUpstreamMain(args[1:])
	case doctorSleeper:
		time.Sleep(10 * time.Minute)
		return 0
	case "stop":
		return stopCmd(args[1:], os.Stdout, os.Stderr, os.Getenv)
	case "restart":
		return restartCmd(args[1:], os.Stdout, os.Stderr, os.Getenv)
	case "login", "logout":
		return loginCmd(cmd, args[1:], os.Stdout, os.Stderr, os.Getenv)
	case "secret":
		return secretCmd(args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	case "adopt":
		return adoptCmd(args[1:], os.Stdout, os.Stderr, os.Getenv, time.Now)
	case "install-service":
		return installService(args[1:], os.Stdout, os.Stderr)
	case "version", "--version":
		fmt.Println("hearthd", version.Tooling())
		return 0
	case "help", "-h", "--help":
		fmt.Print(usage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "hearthd: unknown command %q\n\n%s", cmd, usage)
	return 2
}

func serve(mode daemon.Mode) int {
	// The settings: the config file and this process's own environment
	// (never a client's). SIGHUP re-reads them through d.Reload.
	settings, err := config.Load(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearthd:", err)
		return 2
	}
	live := config.NewLive(settings)
	cfg, err := daemon.LoadConfig(mode, live.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearthd:", err)
		return 2
	}
	cfg.Settings = live
	log, err := daemon.NewLogger(cfg.LogLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearthd:", err)
		return 2
	}
	if path, read := settings.File(); read {
		log.Info("config file read", zap.String("file", path))
	} else {
		log.Info("no config file; settings from the environment and defaults", zap.String("file", path))
	}
	// Take SIGPIPE ourselves: a broken stdout then fails a write (a clean
	// exit) instead of killing the process, and children still start with
	// the default disposition, which an ignored signal would not give them.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	// The version guard runs before any family opens a store
	// (docs/architecture.md): a home in another format is refused untouched.
	place, err := endpoint.HomePlace(os.Getenv)
	if err != nil {
		log.Error("hearthd could not start", zap.Error(err))
		fmt.Fprintln(os.Stderr, "hearthd:", err)
		return 1
	}
	home := place.Path
	unfollowed := endpoint.Unfollowed(os.Getenv)
	for _, u := range unfollowed {
		log.Warn(u)
	}
	// One owner per data directory, whatever socket this process's
	// environment names. A stdio client of a directory that a daemon
	// already serves is relayed to it; nothing here touches the directory.
	if mode == daemon.ModeStdio {
		if relayed, code := relayIfServed(home, log); relayed {
			return code
		}
	}
	// A successor of a planned restart: the upstreams its predecessor
	// hands over, once it drained; then the predecessor's end, as it exits
	// (docs/decisions/0046-upstream-handover.md). Should this process end
	// before it adopts them, their keepers see their daemon gone.
	var handed []hosted.Handed
	var handedLock *os.File
	if mode == daemon.ModeSocket {
		if handed, handedLock, err = receiveHandOver(log); err != nil {
			log.Error("the hand-over from the previous daemon failed; its hosted servers ended with it", zap.Error(err))
		}
	}
	started := time.Now()
	checked, err := guard.Check(home, version.Tooling())
	var refusal *guard.Error
	if errors.As(err, &refusal) {
		log.Error("version guard refused to start", zap.String("home", home), zap.Int("exit_code", refusal.ExitCode), zap.Error(err))
		fmt.Fprintln(os.Stderr, "hearthd:", refusal.Message)
		return refusal.ExitCode
	}
	if err != nil {
		log.Error("version guard failed", zap.String("home", home), zap.Error(err))
		return 1
	}
	log.Info(checked.String(), zap.String("home", home), zap.String("format", checked.Format.String()))
	if code, refused := checkStore(live.Getenv, log); refused {
		return code
	}
	// Claimed after the guard, which leaves a refused directory as it was,
	// and before any store is opened.
	var lock *owner.Lock
	if handedLock != nil {
		// The predecessor's lock, held without a gap.
		if lock, err = owner.Adopt(home, handedLock); err != nil {
			log.Error("hearthd could not start", zap.Error(err))
			return 1
		}
	} else {
		var relayed bool
		var code int
		lock, relayed, code = claim(mode, home, log)
		if relayed || lock == nil {
			return code
		}
	}
	defer lock.Release()
	if prev := lock.Previous; prev.PID != 0 {
		// The previous owner was killed before it could clean up.
		removed := daemon.RemoveLeftovers(prev.PID, prev.Socket, prev.Ready)
		log.Info("the data directory's previous owner ended without cleaning up; removed what it left", zap.Int("previous_pid", prev.PID), zap.Strings("removed", removed))
	}

	env := tool.Env{Home: home, Getenv: live.Getenv, Log: log, Version: version.Tooling()}
	// The keeper is this executable (docs/decisions/0043-keeper-subreaper.md);
	// on Linux /proc/self/exe names it even once an upgrade replaced the file.
	keeper, err := os.Executable()
	if runtime.GOOS == "linux" {
		keeper, err = "/proc/self/exe", nil
	}
	if err != nil {
		log.Warn("hearthd cannot find its own executable; hosted servers run without a keeper", zap.Error(err))
	}
	children := supervisor.New(supervisor.Options{Grace: cfg.KillGrace, MaxChildren: cfg.MaxChildren, KeeperPath: keeper,
		PortableKeeper: portable.Read(os.Getenv).Keeper})
	exe, _, _ := ownExecutable()
	opts := daemon.Options{Config: cfg, Log: log, Env: env, Children: children, Openers: daemon.Families(children),
		OnServing: publish(lock, started), StdioListens: mode == daemon.ModeStdio,
		StartSuccessor: startSuccessor, Executable: exe, OwnerLock: lock.File(), Handed: handed,
		HomeWhy: place.Why, Unfollowed: unfollowed}
	if mode == daemon.ModeSocket {
		opts.CheckUpgrade = upgradeCheck(cfg.UpgradeHandOver, log)
	}
	d, err := daemon.New(opts)
	if err != nil {
		log.Error("hearthd could not start", zap.Error(err))
		return 1
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			_ = d.Reload() // logged, and a problem in daemon_status until a reload succeeds
		}
	}()
	if err := d.Run(ctx); err != nil {
		log.Error("hearthd stopped with an error", zap.Error(err))
		if errors.Is(err, daemon.ErrAlreadyRunning) {
			fmt.Fprintln(os.Stderr, "hearthd:", err)
		}
		return 1
	}
	return 0
}

// migrate is the explicit step the version guard's refusals name.
func migrate(args []string) int {
	adopt := false
	for _, a := range args {
		switch a {
		case "--adopt":
			adopt = true
		default:
			fmt.Fprintf(os.Stderr, "hearthd migrate: unexpected argument %q (usage: hearthd migrate [--adopt])\n", a)
			return 2
		}
	}
	home, err := guard.Home(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearthd migrate:", err)
		return 1
	}
	msg, err := guard.Migrate(home, version.Tooling(), guard.MigrateOptions{Adopt: adopt})
	if err != nil {
		return migrateFailed(err)
	}
	fmt.Println(msg)
	// The PostgreSQL store, when the settings name one, has its own marker.
	settings, err := config.Load(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearthd migrate:", err)
		return 2
	}
	if eng := memory.EngineFor(home, settings.Getenv, version.Tooling()); eng.Server() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		res, err := eng.Migrate(ctx, adopt)
		if err != nil {
			return migrateFailed(err)
		}
		fmt.Println(res)
	}
	return 0
}

// migrateFailed reports a failed migration and is its exit code: the
// guard's for a refusal (another format, data without a marker), else 1.
func migrateFailed(err error) int {
	var refusal *guard.Error
	if errors.As(err, &refusal) {
		fmt.Fprintln(os.Stderr, "hearthd migrate:", refusal.Message)
		return refusal.ExitCode
	}
	fmt.Fprintln(os.Stderr, "hearthd migrate:", err)
	return 1
}

// storeCheckTimeout bounds the start's check of a PostgreSQL store.
const storeCheckTimeout = 10 * time.Second

// checkStore runs the format guard on the PostgreSQL store the settings
// name, if any, before anything is served: a database in another format,
// or hearth tables without a marker, stop the daemon with the guard's exit
// code, untouched. A server that cannot be reached does not: the daemon
// serves, its memory tools answer -32000, and the store (checked again
// when it opens) is retried.
func checkStore(getenv func(string) string, log *zap.Logger) (int, bool) {
	eng := memory.EngineFor("", getenv, version.Tooling())
	if !eng.Server() {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeCheckTimeout)
	defer cancel()
	created, err := eng.Check(ctx)
	var refusal *guard.Error
	switch {
	case errors.As(err, &refusal):
		log.Error("version guard refused the PostgreSQL store", zap.String("store", eng.Describe()), zap.Int("exit_code", refusal.ExitCode), zap.Error(err))
		fmt.Fprintln(os.Stderr, "hearthd:", refusal.Message)
		return refusal.ExitCode, true
	case err != nil:
		log.Warn("the PostgreSQL store cannot be checked now; memory tools answer -32000 until it can", zap.Error(err))
	default:
		log.Info("format check passed on the PostgreSQL store", zap.String("store", eng.Describe()), zap.String("format", eng.Format()), zap.Bool("created", created))
	}
	return 0, false
}
