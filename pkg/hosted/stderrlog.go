package hosted

import (
	"bytes"
	"os"
	"strings"
	"sync"

	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// DefaultLogCap bounds an instance's stderr log: past it, the file is moved
// to NAME.1 (replacing the one before) and a new one begun, so a chatty
// server holds at most twice this much of the disk.
const DefaultLogCap = 1 << 20

// lastLines is how many of the latest stderr lines an error quotes.
const lastLines = 8

// stderrLog writes an upstream's stderr to its capped log file and keeps its
// last lines for error messages.
type stderrLog struct {
	path string
	cap  int64

	mu      sync.Mutex
	f       *os.File
	size    int64
	partial []byte
	lines   []string
}

// openStderrLog opens the log at path, a file of hearth's own (the state
// directory's servers/): appended to as safefile.AppendOwn allows, so a
// link, a FIFO or another user's file planted at the name is not written
// (the server then runs without a log file, its last lines still kept).
func openStderrLog(path string, limit int64) *stderrLog {
	l := &stderrLog{path: path, cap: limit}
	if f, err := safefile.AppendOwn(path); err == nil {
		l.f = f
		if fi, err := f.Stat(); err == nil {
			l.size = fi.Size()
		}
	}
	return l
}

// Write never fails: a log that cannot be written must not stop the server.
func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		if l.size+int64(len(p)) > l.cap {
			l.rotate()
		}
		if l.f != nil {
			n, _ := l.f.Write(p)
			l.size += int64(n)
		}
	}
	data := append(l.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		l.keep(string(data[:i]))
		data = data[i+1:]
	}
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	l.partial = append([]byte(nil), data...)
	return len(p), nil
}

func (l *stderrLog) keep(line string) {
	line = strings.TrimRight(strings.ToValidUTF8(line, "?"), "\r")
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	if strings.TrimSpace(line) == "" {
		return
	}
	l.lines = append(l.lines, line)
	if len(l.lines) > lastLines {
		l.lines = l.lines[len(l.lines)-lastLines:]
	}
}

// rotate moves the log to NAME.1 and begins a new one, created anew
// (safefile.CreateOwn): whatever was put at the name meanwhile is replaced,
// never truncated through.
func (l *stderrLog) rotate() {
	l.f.Close()
	_ = os.Rename(l.path, l.path+".1")
	f, err := safefile.CreateOwn(l.path)
	if err != nil {
		l.f = nil
		return
	}
	l.f, l.size = f, 0
}

// mark writes a line of hearth's own into the log (a start, an exit).
func (l *stderrLog) mark(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		n, _ := l.f.WriteString("hearth: " + line + "\n")
		l.size += int64(n)
	}
}

// tail is the last lines written, the unfinished one included.
func (l *stderrLog) tail() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]string(nil), l.lines...)
	if s := strings.TrimSpace(string(l.partial)); s != "" {
		out = append(out, s)
	}
	return out
}

// forget drops the kept lines (a new process begins).
func (l *stderrLog) forget() {
	l.mu.Lock()
	l.lines, l.partial = nil, nil
	l.mu.Unlock()
}

func (l *stderrLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
