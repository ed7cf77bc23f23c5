package proctable

import (
	"errors"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// List takes a ToolHelp snapshot of every process (pid, parent, executable
// name) and opens each to read its creation time, which names it (Windows
// reuses pids at once; a parent pid that names a process created later is
// not the parent). A process this user may not open is listed with Start 0.
func List() ([]Proc, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(snap)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	var procs []Proc
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		p := Proc{Pid: int(e.ProcessID), PPid: int(e.ParentProcessID), Name: windows.UTF16ToString(e.ExeFile[:])}
		if h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, e.ProcessID); err == nil {
			var created, exited, kernel, user windows.Filetime
			if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) == nil {
				p.Start = fileTime(created)
				p.CPU = time.Duration(fileTime(kernel)+fileTime(user)) * 100
			}
			windows.CloseHandle(h)
		}
		procs = append(procs, p)
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, err
	}
	return procs, nil
}

func fileTime(ft windows.Filetime) uint64 {
	return uint64(ft.HighDateTime)<<32 | uint64(ft.LowDateTime)
}

// Started is when p started: Start is a FILETIME (100 ns since 1601).
func Started(p Proc) time.Time {
	if p.Start == 0 {
		return time.Time{}
	}
	ft := windows.Filetime{HighDateTime: uint32(p.Start >> 32), LowDateTime: uint32(p.Start)}
	return time.Unix(0, ft.Nanoseconds())
}

var getProcessMemoryInfo = windows.NewLazySystemDLL("kernel32.dll").NewProc("K32GetProcessMemoryInfo")

// processMemoryCounters is PROCESS_MEMORY_COUNTERS (psapi.h).
type processMemoryCounters struct {
	cb                                                 uint32
	pageFaultCount                                     uint32
	peakWorkingSetSize, workingSetSize                 uintptr
	quotaPeakPagedPoolUsage, quotaPagedPoolUsage       uintptr
	quotaPeakNonPagedPoolUsage, quotaNonPagedPoolUsage uintptr
	pagefileUsage, peakPagefileUsage                   uintptr
}

// Details fills each process's RSS (its working set) with
// K32GetProcessMemoryInfo; List has read its CPU time already.
func Details(procs []Proc) {
	for i := range procs {
		h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(procs[i].Pid))
		if err != nil {
			continue
		}
		var c processMemoryCounters
		c.cb = uint32(unsafe.Sizeof(c))
		if r, _, _ := getProcessMemoryInfo.Call(uintptr(h), uintptr(unsafe.Pointer(&c)), uintptr(c.cb)); r != 0 {
			procs[i].RSS = int64(c.workingSetSize)
		}
		windows.CloseHandle(h)
	}
}

// Parameters reads the RTL_USER_PROCESS_PARAMETERS of pid out of its
// process environment block (what Args, Env and the orphan sweep's
// standard handles come from), with a handle to the process that the
// caller closes.
func Parameters(pid int, access uint32) (windows.Handle, *windows.RTL_USER_PROCESS_PARAMETERS, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.PROCESS_VM_READ|access, false, uint32(pid))
	if err != nil {
		return 0, nil, err
	}
	var pbi windows.PROCESS_BASIC_INFORMATION
	if err := windows.NtQueryInformationProcess(h, windows.ProcessBasicInformation, unsafe.Pointer(&pbi), uint32(unsafe.Sizeof(pbi)), nil); err != nil {
		windows.CloseHandle(h)
		return 0, nil, err
	}
	var peb windows.PEB
	if err := readMemory(h, uintptr(unsafe.Pointer(pbi.PebBaseAddress)), unsafe.Pointer(&peb), unsafe.Sizeof(peb)); err != nil {
		windows.CloseHandle(h)
		return 0, nil, err
	}
	params := new(windows.RTL_USER_PROCESS_PARAMETERS)
	if err := readMemory(h, uintptr(unsafe.Pointer(peb.ProcessParameters)), unsafe.Pointer(params), unsafe.Sizeof(*params)); err != nil {
		windows.CloseHandle(h)
		return 0, nil, err
	}
	return h, params, nil
}

func readMemory(h windows.Handle, at uintptr, to unsafe.Pointer, size uintptr) error {
	var n uintptr
	if err := windows.ReadProcessMemory(h, at, (*byte)(to), size, &n); err != nil {
		return err
	}
	if n != size {
		return errors.New("a short read of another process's memory")
	}
	return nil
}

// Args is pid's command line, read from its process parameters and split
// as the C runtime splits it.
func Args(pid int) ([]string, error) {
	h, params, err := Parameters(pid, 0)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(h)
	n := int(params.CommandLine.Length / 2)
	if n == 0 {
		return nil, nil
	}
	buf := make([]uint16, n)
	if err := readMemory(h, uintptr(unsafe.Pointer(params.CommandLine.Buffer)), unsafe.Pointer(&buf[0]), uintptr(n*2)); err != nil {
		return nil, err
	}
	return windows.DecomposeCommandLine(windows.UTF16ToString(buf))
}

// Env is pid's environment block, read from its process parameters.
func Env(pid int) ([]string, error) {
	h, params, err := Parameters(pid, 0)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(h)
	size := min(params.EnvironmentSize, 1<<20)
	if size < 2 || params.Environment == nil {
		return nil, nil
	}
	buf := make([]uint16, size/2)
	if err := readMemory(h, uintptr(params.Environment), unsafe.Pointer(&buf[0]), uintptr(len(buf)*2)); err != nil {
		return nil, err
	}
	return envBlock(buf), nil
}

// UID: Windows names users by security identifiers, not numbers; the
// orphan sweep compares the processes' token users instead.
func UID(int) (int, error) { return -1, errors.New("no numeric user ids on Windows") }
