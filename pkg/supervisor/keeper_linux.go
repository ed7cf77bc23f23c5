package supervisor

import "syscall"

// keeperSignal is the keeper's parent-death signal: one it catches, so it
// can kill its group before it goes.
const keeperSignal = syscall.SIGUSR2

func setKeeperSignal(a *syscall.SysProcAttr) { a.Pdeathsig = keeperSignal }
