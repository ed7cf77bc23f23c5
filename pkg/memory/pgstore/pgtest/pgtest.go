// Package pgtest runs a real PostgreSQL server for tests: initdb into a
// temporary directory, then pg_ctl start listening only on a Unix socket in
// that directory (no TCP port), stopped and removed when the test ends.
//
// initdb refuses to run as root, and CI runs as root: there the server's
// files belong to the "postgres" user and every server command runs as that
// user (runuser, else su). Where PostgreSQL is not installed the tests skip,
// except under CI=true, where they fail: CI installs Debian's postgresql
// package and must run them.
package pgtest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the role the test cluster is created with (trust auth).
const Superuser = "hearth"

// Options change how a server runs.
type Options struct {
	// Durable keeps fsync on, for figures about durable writes. Tests that
	// only kill clients, never the server or the machine, leave it off.
	Durable bool
}

// Server is one running test cluster.
type Server struct {
	Dir  string // the temporary directory: data/, the socket, log
	bin  string // the directory of initdb and pg_ctl
	opts Options
	uid  int // the owner of Dir when tests run as root, else -1
	gid  int
	dbs  atomic.Int64
}

// Bin finds the directory holding initdb and pg_ctl: PATH, else Debian's
// /usr/lib/postgresql/<version>/bin (newest version first). "" when absent.
func Bin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Dir(real)
			}
			return filepath.Dir(p)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// need skips t when PostgreSQL is missing, or fails it under CI=true.
func need(t testing.TB) string {
	t.Helper()
	bin := Bin()
	if bin != "" {
		return bin
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("PostgreSQL's initdb and pg_ctl are not installed (CI installs Debian's postgresql package: see .ci/run)")
	}
	t.Skip("PostgreSQL is not installed (initdb, pg_ctl); apt-get install postgresql to run this test")
	return ""
}

// Start runs a new server for t and stops it when t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := start(need(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Remove)
	return s
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Shared returns the test binary's one shared server, starting it on first
// use. The package's TestMain must call Main so that it is stopped.
func Shared(t testing.TB) *Server {
	t.Helper()
	bin := need(t)
	sharedOnce.Do(func() { shared, sharedErr = start(bin, Options{}) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// Main runs the tests and then stops the shared server, if one started.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Remove()
	}
	return code
}

// ownerFile holds the pid of the test process that started a server.
const ownerFile = "owner.pid"

// reap stops and removes the servers of test processes that are gone (a
// test binary killed by its timeout never ran its cleanup): a postmaster
// outlives the process that started it.
func reap(bin string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "hearth-pg-*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not started by this package, or still starting
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || !processGone(pid) {
			continue // its test process still runs
		}
		fi, err := os.Stat(dir)
		if err != nil {
			continue
		}
		s := &Server{Dir: dir, bin: bin, uid: -1, gid: -1}
		if uid, gid, ok := fileOwner(fi); ok && os.Geteuid() == 0 && uid != 0 {
			s.uid, s.gid = uid, gid
		}
		s.Remove()
	}
}

func start(bin string, opts Options) (*Server, error) {
	reap(bin)
	dir, err := os.MkdirTemp("", "hearth-pg-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin, opts: opts, uid: -1, gid: -1}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, PostgreSQL must run as the postgres user, which does not exist: %w", err)
		}
		s.uid, _ = strconv.Atoi(u.Uid)
		s.gid, _ = strconv.Atoi(u.Gid)
		if err := os.Chown(dir, s.uid, s.gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if out, err := s.run("initdb", "-D", s.data(), "-U", Superuser, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) data() string { return filepath.Join(s.Dir, "data") }

// run runs one of PostgreSQL's programs, as the postgres user under root.
func (s *Server) run(prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name, argv := filepath.Join(s.bin, prog), args
	if s.uid >= 0 {
		if rp, err := exec.LookPath("runuser"); err == nil {
			name, argv = rp, append([]string{"-u", "postgres", "--", name}, args...)
		} else {
			quoted := make([]string, 0, len(args)+1)
			for _, a := range append([]string{name}, args...) {
				quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
			}
			name, argv = "su", []string{"postgres", "-s", "/bin/sh", "-c", strings.Join(quoted, " ")}
		}
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir = s.Dir
	// A clean environment: PG* variables of the caller must not steer it.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	return cmd.CombinedOutput()
}

// Start starts the (stopped) server and waits until it accepts connections.
func (s *Server) Start() error {
	o := "-c listen_addresses='' -k " + s.Dir + " -c max_connections=200 -c shared_buffers=64MB"
	if !s.opts.Durable {
		o += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if out, err := s.run("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.Dir, "log"), "-o", o, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the server (fast shutdown: connections are closed, nothing is
// lost). Start brings it back with its data.
func (s *Server) Stop() error {
	if out, err := s.run("pg_ctl", "-D", s.data(), "-m", "fast", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// Remove stops the server if it runs and deletes its directory.
func (s *Server) Remove() {
	s.run("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop")
	os.RemoveAll(s.Dir)
}

// DSN is the key/value connection string for database db.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=%s port=5432 user=%s dbname=%s sslmode=disable", s.Dir, Superuser, db)
}

// URL is the postgres:// URL for database db.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s&sslmode=disable", Superuser, db, s.Dir)
}

// CreateDB creates a new empty database and returns its name.
func (s *Server) CreateDB(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs.Add(1))
	if err := s.Exec(context.Background(), "postgres", "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return name
}

// Exec runs one statement in database db as the superuser.
func (s *Server) Exec(ctx context.Context, db, sql string, args ...any) error {
	conn, err := pgx.Connect(ctx, s.DSN(db))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

// processGone reports whether no process has the id pid, where the system
// tells (proc_unix.go sets it); elsewhere it never knows.
var processGone = func(pid int) bool { return false }

// fileOwner is the user and group that own a file, where the system says
// (proc_unix.go sets it).
var fileOwner = func(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
