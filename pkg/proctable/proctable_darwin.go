package proctable

import "golang.org/x/sys/unix"

// p_stat's values (sys/proc.h): stopped, and zombie.
const (
	sstop = 4
	szomb = 5
)

// List asks sysctl kern.proc.all for every process's kinfo_proc.
func List() ([]Proc, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	procs := make([]Proc, 0, len(kps))
	for i := range kps {
		p := &kps[i].Proc
		tv := p.P_starttime
		procs = append(procs, Proc{
			Pid:     int(p.P_pid),
			PPid:    int(kps[i].Eproc.Ppid),
			Pgid:    int(kps[i].Eproc.Pgid),
			Start:   uint64(tv.Sec)*1e6 + uint64(tv.Usec),
			Stopped: p.P_stat == sstop,
			Zombie:  p.P_stat == szomb,
		})
	}
	return procs, nil
}
