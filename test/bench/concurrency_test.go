//go:build unix

package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// muxConn is one connection whose replies are read by a goroutine and handed
// to whoever waits for their id, so calls can overlap on it.
type muxConn struct {
	mu      sync.Mutex
	w       *bufio.Writer
	waiting map[string]chan []byte
}

func newMuxConn(b *testing.B, r io.Reader, w io.Writer) *muxConn {
	m := &muxConn{w: bufio.NewWriter(w), waiting: map[string]chan []byte{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	go func() {
		for sc.Scan() {
			var env struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &env) != nil || len(env.ID) == 0 {
				continue // notifications (progress)
			}
			m.mu.Lock()
			ch := m.waiting[string(env.ID)]
			delete(m.waiting, string(env.ID))
			m.mu.Unlock()
			if ch != nil {
				ch <- append([]byte(nil), sc.Bytes()...)
			}
		}
	}()
	return m
}

// send writes one request and returns where its reply will arrive.
func (m *muxConn) send(id, line string) <-chan []byte {
	ch := make(chan []byte, 1)
	m.mu.Lock()
	m.waiting[id] = ch
	m.w.WriteString(line + "\n")
	m.w.Flush()
	m.mu.Unlock()
	return ch
}

func (m *muxConn) call(b *testing.B, id, line string) []byte {
	select {
	case r := <-m.send(id, line):
		return r
	case <-time.After(5 * time.Minute):
		b.Fatalf("no reply to %s", id)
		return nil
	}
}

func dialMux(b *testing.B, sock string) *muxConn {
	nc, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	m := newMuxConn(b, nc, nc)
	m.call(b, "0", initLine)
	m.mu.Lock()
	m.w.WriteString(initedLine + "\n")
	m.w.Flush()
	m.mu.Unlock()
	return m
}

func buildLine(id int, src string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"b%d","method":"tools/call","params":{"name":"index_build","arguments":{"repo_path":%q,"incremental":false}}}`, id, src)
}

// BenchmarkPingDuringBuild: sequential pings on the connection that is
// running a full index_build of Go's source tree, against pings on an idle
// connection in the same run. Target: p99 ≤ 50 ms during the build.
func BenchmarkPingDuringBuild(b *testing.B) {
	src := goSource(b)
	sock := startSocketDaemon(b)
	m := dialMux(b, sock)
	ping := func(i int) time.Duration {
		t0 := time.Now()
		m.call(b, fmt.Sprintf(`"p%d"`, i), fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"ping"}`, i))
		return time.Since(t0)
	}
	idle := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		idle = append(idle, ping(i))
	}
	busy := make([]time.Duration, 0, b.N)
	builds := 0
	b.ResetTimer()
	for len(busy) < b.N {
		builds++
		done := m.send(fmt.Sprintf(`"b%d"`, builds), buildLine(builds, src))
		time.Sleep(200 * time.Millisecond) // the worker is indexing
	pinging:
		for len(busy) < b.N {
			select {
			case r := <-done:
				if strings.Contains(string(r), `"isError":true`) {
					b.Fatalf("index_build: %.300s", r)
				}
				break pinging
			default:
			}
			busy = append(busy, ping(len(busy)+b.N))
		}
		if len(busy) == b.N {
			<-done
		}
	}
	b.StopTimer()
	ip50, _ := quantiles(b, "idle-", idle)
	bp50, bp99 := quantiles(b, "during-build-", busy)
	b.Logf("ping on the building connection: p50 %.0f µs, p99 %.0f µs over %d builds (idle p50 %.0f µs)", bp50, bp99, builds, ip50)
}

// BenchmarkConcurrentSearch: one search alone, then two sent together on
// the same connection, over Go's source tree. Two together should take
// about one call's time (on two cores), not two.
func BenchmarkConcurrentSearch(b *testing.B) {
	src := goSource(b)
	sock := startSocketDaemon(b)
	m := dialMux(b, sock)
	if r := m.call(b, `"b0"`, buildLine(0, src)); strings.Contains(string(r), `"isError":true`) {
		b.Fatalf("index_build: %.300s", r)
	}
	// A query that touches much of the index: it takes milliseconds.
	search := func(id string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"search","arguments":{"repo_path":%q,"query":"func .*Context\\(","regex":true,"limit":5,"context_lines":0}}}`, id, src)
	}
	var one, two []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		m.call(b, fmt.Sprintf(`"s%d"`, i), search(fmt.Sprintf("s%d", i)))
		one = append(one, time.Since(t0))
		t0 = time.Now()
		x := m.send(fmt.Sprintf(`"x%d"`, i), search(fmt.Sprintf("x%d", i)))
		y := m.send(fmt.Sprintf(`"y%d"`, i), search(fmt.Sprintf("y%d", i)))
		<-x
		<-y
		two = append(two, time.Since(t0))
	}
	b.StopTimer()
	op50, _ := quantiles(b, "one-", one)
	tp50, _ := quantiles(b, "two-together-", two)
	b.ReportMetric(tp50/op50, "two-over-one-x")
}
