//go:build windows

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Every child runs in a Job Object of its own (docs/decisions/0048-windows-processes.md):
// the job is to Windows what the keeper is to Unix. It has
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and its only handle is the daemon's
// (not inheritable), so when the daemon dies, however it dies, the kernel
// closes that handle and ends every process of the job; a descendant is in
// its parent's job from birth and cannot break away (no
// JOB_OBJECT_LIMIT_BREAKAWAY_OK). The child is created suspended and only
// resumed once it is in the job, so it cannot start anything outside it.
// Where no job can be made, the child runs without one and taskkill /T ends
// its tree.

// jobs are the live children's jobs, by the child's pid. An entry also
// holds a handle of the child, so that its pid is not reused before the
// entry is forgotten.
var jobs = struct {
	sync.Mutex
	m map[int]*job
}{m: map[int]*job{}}

type job struct {
	handle  windows.Handle // the job
	process windows.Handle // the child
}

// prepare starts the child in a new process group, so that a console's
// Ctrl events address it and not the daemon.
func prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}

// start creates the child suspended, puts it in a new job, and resumes it.
// Go's os/exec closes the new thread's handle, so the thread is found by a
// snapshot of the system's threads (a suspended new process has one; every
// thread of it is resumed). A child that cannot be resumed is ended, and
// start fails.
func start(cmd *exec.Cmd) error {
	prepare(cmd) // SysProcAttr is set
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	j, jobErr := newJob(pid)
	if err := resume(pid); err != nil {
		if j != nil {
			j.close(1)
		} else {
			cmd.Process.Kill()
		}
		cmd.Wait()
		if jobErr != nil {
			err = errors.Join(err, jobErr)
		}
		return fmt.Errorf("resume process %d: %w", pid, err)
	}
	if j != nil {
		jobs.Lock()
		jobs.m[pid] = j
		jobs.Unlock()
	}
	return nil
}

// newJob makes the kill-on-close job and puts the suspended process pid in
// it. An error leaves nothing open: the child then runs without a job (a
// daemon in a job that forbids nesting, before Windows 8).
func newJob(pid int) (*job, error) {
	h, err := windows.CreateJobObject(nil, nil) // no security attributes: not inheritable
	if err != nil {
		return nil, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("set the job's limits: %w", err)
	}
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("open process %d: %w", pid, err)
	}
	if err := windows.AssignProcessToJobObject(h, p); err != nil {
		windows.CloseHandle(p)
		windows.CloseHandle(h)
		return nil, fmt.Errorf("assign process %d to its job: %w", pid, err)
	}
	return &job{handle: h, process: p}, nil
}

// close ends every process of the job and closes its handles.
func (j *job) close(code uint32) {
	windows.TerminateJobObject(j.handle, code)
	windows.CloseHandle(j.handle)
	windows.CloseHandle(j.process)
}

// resume resumes every thread of process pid.
func resume(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("snapshot threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread %d: %w", entry.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume thread %d: %w", entry.ThreadID, err)
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("no thread found")
	}
	return nil
}

func jobOf(pid int) *job {
	jobs.Lock()
	defer jobs.Unlock()
	return jobs.m[pid]
}

// terminate: Windows has no SIGTERM for a console program; the polite
// step is Stop's closing of stdin, so both steps end the tree.
func terminate(pid int) { kill(pid) }

// kill ends the child's tree: its job, or, without one, taskkill /T (the
// tree) /F (forced). A tree that is already gone makes taskkill fail,
// which is ignored.
func kill(pid int) {
	if pid <= 0 {
		return
	}
	if j := jobOf(pid); j != nil {
		windows.TerminateJobObject(j.handle, 1)
		return
	}
	taskkill := "taskkill"
	if dir, err := windows.GetSystemDirectory(); err == nil {
		taskkill = filepath.Join(dir, "taskkill.exe") // not one found in PATH or the current directory
	}
	_ = exec.Command(taskkill, "/pid", strconv.Itoa(pid), "/T", "/F").Run()
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime, ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses, TotalTerminatedProcesses     uint32
}

// awaitGroupGone waits, up to limit, until the job has no process left
// (TerminateJobObject, like every termination, completes asynchronously).
// Without a job, taskkill /T /F returned once the tree was terminated.
func awaitGroupGone(pid int, limit time.Duration) bool {
	j := jobOf(pid)
	if j == nil {
		return true
	}
	deadline := time.Now().Add(limit)
	for {
		var acct jobAccounting
		if err := windows.QueryInformationJobObject(j.handle, windows.JobObjectBasicAccountingInformation,
			uintptr(unsafe.Pointer(&acct)), uint32(unsafe.Sizeof(acct)), nil); err != nil || acct.ActiveProcesses == 0 {
			return err == nil
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// forget closes the child's job once its tree is gone (closing it ends
// whatever is left, as the daemon's death would).
func forget(pid int) {
	jobs.Lock()
	j := jobs.m[pid]
	delete(jobs.m, pid)
	jobs.Unlock()
	if j != nil {
		j.close(1)
	}
}

func exitStatus(state *os.ProcessState) (int, string) { return state.ExitCode(), "" }
