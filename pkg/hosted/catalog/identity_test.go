package catalog

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// What the identity tells that size and modification time alone did not:
// a script rewritten with its size and time kept (its content is hashed),
// the module `python -m` runs from the server's directory, the files a
// `sh -c` command line names, and those a launcher script names. Each
// changed is another build; unchanged, the same.
func TestIdentityTellsMore(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// keepStamp rewrites a file with content of the same size and puts its
	// modification time back.
	keepStamp := func(p, content string) {
		fi, _ := os.Stat(p)
		if int64(len(content)) != fi.Size() {
			t.Fatalf("%q is not %d bytes", content, fi.Size())
		}
		os.WriteFile(p, []byte(content), 0o755)
		os.Chtimes(p, fi.ModTime(), fi.ModTime())
	}
	python := write("python3", "#!/bin/sh\n")
	node := write("node", "#!/bin/sh\n")
	sh := write("sh", "#!/bin/sh\n")
	server := write("server.js", "console.log(1)")
	write("pkg/mod/__main__.py", "print(1)")
	write("tool.py", "print(2)")
	launcher := write("run.sh", "#!/bin/sh\nexec node ./server.js --port 1\n")
	for _, tc := range []struct {
		name    string
		command string
		args    []string
		change  func()
	}{
		{"a script rewritten, size and time kept", node, []string{"server.js"}, func() { keepStamp(server, "console.log(2)") }},
		{"python -m a package's __main__", python, []string{"-m", "pkg.mod"}, func() { keepStamp(filepath.Join(dir, "pkg/mod/__main__.py"), "print(3)") }},
		{"python -m a module file", python, []string{"-u", "-m", "tool"}, func() { write("tool.py", "print(22)") }},
		{"sh -c naming a script", sh, []string{"-c", "exec node server.js"}, func() { write("server.js", "console.log(333)") }},
		{"a launcher script naming the server", launcher, nil, func() { write("server.js", "console.log(4444)") }},
		{"sh running a launcher", sh, []string{"run.sh"}, func() { write("server.js", "console.log(55555)") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := Identify(tc.command, tc.args, dir)
			if !before.Same(Identify(tc.command, tc.args, dir)) {
				t.Fatal("the same build is not the same")
			}
			time.Sleep(10 * time.Millisecond)
			tc.change()
			if before.Same(Identify(tc.command, tc.args, dir)) {
				t.Fatalf("a change is the same build: %+v", before.Files)
			}
		})
	}
}
