//go:build unix

package bench

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// daemonPID reads the pid from the readiness file of the daemon serving in
// runtime.
func daemonPID(b *testing.B, runtime string) int {
	raw, err := os.ReadFile(filepath.Join(runtime, "hearth", "hearthd.ready"))
	if err != nil {
		b.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.Fields(string(raw))[0])
	if err != nil {
		b.Fatal(err)
	}
	return pid
}

// BenchmarkMemoryBounds: what hostile or careless clients cost the daemon,
// as its RSS before, at the peak, and 12 s after they leave.
//
//   - flood: four clients each send 150 frames of 1 MiB (tools/call
//     validate_asset of a megabyte of numbers) and never read a reply;
//   - burst: 1 000 connections at once, each sending half of a 1 MiB line.
//
// The daemon-wide bound (max_held_mb, 512 MiB) caps what pending requests
// and partly read lines hold together; max_connections (512) caps the
// burst; freed memory goes back to the system within seconds.
func BenchmarkMemoryBounds(b *testing.B) {
	sock, runtime := startSocketDaemonIn(b)
	pid := daemonPID(b, runtime)
	frame := func(id int) []byte {
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"validate_asset","arguments":{"schema":"shader","asset":{"pad":[%s0]}}}}`+"\n",
			id, strings.Repeat("0,", (1<<20-200)/2)))
	}
	peak := func(stop <-chan struct{}) <-chan int {
		out := make(chan int, 1)
		go func() {
			max := 0
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				if r := rssKB(pid); r > max {
					max = r
				}
				select {
				case <-stop:
					out <- max
					return
				case <-t.C:
				}
			}
		}()
		return out
	}
	settle := func() int { time.Sleep(12 * time.Second); return rssKB(pid) }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := rssKB(pid)
		stop := make(chan struct{})
		peaked := peak(stop)
		var wg sync.WaitGroup
		var conns []net.Conn
		var mu sync.Mutex
		for c := 0; c < 4; c++ {
			nc, err := net.Dial("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, nc)
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := bufio.NewWriter(nc)
				w.WriteString(initLine + "\n" + initedLine + "\n")
				for id := 1; id <= 150; id++ {
					nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
					w.Write(frame(id))
					if w.Flush() != nil {
						return // the daemon stopped reading: it is full
					}
				}
			}()
		}
		wg.Wait()
		time.Sleep(time.Second)
		probe, err := net.Dial("unix", sock) // another client is still served
		if err != nil {
			b.Fatal(err)
		}
		pc := newConn(probe)
		pc.initialize(b)
		pc.roundTrip(b, pingLine)
		probe.Close()
		close(stop)
		floodPeak := <-peaked
		for _, nc := range conns {
			nc.Close()
		}
		floodAfter := settle()

		stop = make(chan struct{})
		peaked = peak(stop)
		half := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 1<<19))
		conns = conns[:0]
		refused := 0
		for c := 0; c < 1000; c++ {
			nc, err := net.Dial("unix", sock)
			if err != nil {
				refused++
				continue
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			nc.Write(half)
		}
		time.Sleep(time.Second)
		close(stop)
		burstPeak := <-peaked
		for _, nc := range conns {
			nc.Close()
		}
		burstAfter := settle()
		b.ReportMetric(float64(before)/1024, "before-MB")
		b.ReportMetric(float64(floodPeak)/1024, "flood-peak-MB")
		b.ReportMetric(float64(floodAfter)/1024, "flood-after-MB")
		b.ReportMetric(float64(burstPeak)/1024, "burst-peak-MB")
		b.ReportMetric(float64(burstAfter)/1024, "burst-after-MB")
		b.Logf("RSS: before %d MB; four non-reading 1 MiB-frame clients: peak %d MB, 12 s after %d MB; 1 000-connection burst (%d refused at connect): peak %d MB, 12 s after %d MB",
			before/1024, floodPeak/1024, floodAfter/1024, refused, burstPeak/1024, burstAfter/1024)
	}
}
