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
// docs/decisions/0041-raw-nonblocking-io.md). So the calls here are made
// raw, and every wait is the poller's.
//
// A raw call must never wait: the goroutine making it cannot be preempted,
// so a stop of the world (each GC) would wait for it, and with it every
// client of the daemon. Setting O_NONBLOCK is not enough, since a client's
// stdio is an open file description it shares with the client, which may
// turn it back to blocking at any time. So Read and Write ask the kernel
// itself not to wait (preadv2/pwritev2 with RWF_NOWAIT), whatever the
// descriptor's mode; where it cannot (older kernels' pipes), and for
// Splice into a socket, the call is raw only while the descriptor is
// non-blocking and ordinary otherwise; the poll has a zero timeout.
//
// The race detector does not see what the kernel does with a raw call's
// buffer (package syscall reports it for the ordinary calls): Read and
// Write report it themselves in a race build, as written by a read and
// read by a write, so that the daemon's tests under -race cover the
// buffers handed to them.
//
// Only Linux has them; elsewhere the package is empty and its callers use
// the ordinary calls.
package rawio
