// Package rawio makes the few system calls on a frame's way through the
// daemon without telling the Go scheduler about them, and waits for a
// descriptor in the runtime's poller.
//
// A system call made the ordinary way (syscall.Syscall) is one the
// scheduler must assume may block. Entering one wakes the runtime's
// monitor thread (sysmon) whenever it had gone to sleep because every P
// was idle, which is the case each time the daemon waits for the next
// frame; and a call still under way when the monitor next looks has its P
// handed to another thread, started for nothing when there is no other
// work. A daemon that waits for a frame, then makes a handful of short
// calls, paid one to two extra thread wake-ups per frame that way (see
// docs/decisions/0041-raw-nonblocking-io.md). The calls here cannot block:
// every descriptor they are given is non-blocking, and the poll has a zero
// timeout. So they are made raw, and every wait is the poller's.
//
// Only Linux has them; elsewhere the package is empty and its callers use
// the ordinary calls.
package rawio
