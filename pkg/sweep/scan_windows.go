package sweep

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

var peekNamedPipe = windows.NewLazySystemDLL("kernel32.dll").NewProc("PeekNamedPipe")

// scan reads the process table (a ToolHelp snapshot, creation times,
// working sets), each process's user (its token's security identifier,
// compared with the sweep's own), and for this user's processes the command
// line, the environment and the standard input handle from the process
// parameters in its environment block. Windows has no reparenting: a
// process whose parent died keeps the dead parent's pid, which the table
// then shows free or given to a process created later (clientGone). An
// anonymous pipe is a named pipe there: the stdin handle, duplicated into
// the sweep, answers PeekNamedPipe with ERROR_BROKEN_PIPE once its write
// end is closed everywhere. Which handles of which processes name the same
// pipe is not asked (the handle's pid and value stand for it), so a tree is
// what descends from its top process.
func scan() ([]Process, error) {
	table, err := proctable.List()
	if err != nil {
		return nil, err
	}
	proctable.Details(table)
	mine, err := processUser(windows.CurrentProcess())
	if err != nil {
		return nil, err
	}
	procs := make([]Process, 0, len(table))
	for _, t := range table {
		p := Process{Proc: t, UID: -1, Started: proctable.Started(t)}
		if h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(t.Pid)); err == nil {
			u, err := processUser(h)
			windows.CloseHandle(h)
			p.Mine = err == nil && u == mine
		}
		if p.Mine {
			p.Args, _ = proctable.Args(t.Pid)
			p.Env, _ = proctable.Env(t.Pid)
			p.Stdin = stdinStream(t.Pid)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// processUser is the security identifier of h's token's user.
func processUser(h windows.Handle) (string, error) {
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return "", err
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return "", err
	}
	return u.User.Sid.String(), nil
}

// stdinStream duplicates pid's standard input handle and asks whether it
// is a pipe whose writer is gone.
func stdinStream(pid int) Stream {
	h, params, err := proctable.Parameters(pid, windows.PROCESS_DUP_HANDLE)
	if err != nil {
		return Stream{}
	}
	defer windows.CloseHandle(h)
	if params.StandardInput == 0 {
		return Stream{}
	}
	var dup windows.Handle
	if err := windows.DuplicateHandle(h, params.StandardInput, windows.CurrentProcess(), &dup, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return Stream{}
	}
	defer windows.CloseHandle(dup)
	if t, err := windows.GetFileType(dup); err != nil || t != windows.FILE_TYPE_PIPE {
		return Stream{}
	}
	var avail uint32
	r, _, err := peekNamedPipe.Call(uintptr(dup), 0, 0, 0, uintptr(unsafe.Pointer(&avail)), 0)
	return Stream{Kind: "pipe", ID: uint64(pid)<<32 | uint64(params.StandardInput), Closed: r == 0 && errors.Is(err, windows.ERROR_BROKEN_PIPE)}
}

// signal ends pid if it is still the process created at start: Windows
// has no SIGTERM for a process without a console of its own, so the first
// word and the last are both TerminateProcess, through the handle whose
// creation time was checked (a handle keeps its process's pid from being
// reused).
func signal(pid int, start uint64, _ bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) != nil || uint64(created.HighDateTime)<<32|uint64(created.LowDateTime) != start {
		return
	}
	_ = windows.TerminateProcess(h, 1)
}

func self() me { return me{pid: os.Getpid()} }
