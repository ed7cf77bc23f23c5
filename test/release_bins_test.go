//go:build linux

package test

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// releaseEnv names the directory of the release archives tools/release
// wrote (.ci/run sets it): the doctor's and Wine's tests then run the
// binaries users download, for the targets that run here (linux/amd64
// natively, windows/amd64 under Wine), not ones built for the test.
const releaseEnv = "HEARTH_RELEASE_DIST"

// releaseBinaries extracts hearthd and hearth for goos/amd64 from the
// release archive into a directory of their own and returns it; "" when no
// release was named (outside CI: the caller builds from source).
func releaseBinaries(t *testing.T, goos string) string {
	t.Helper()
	dist := os.Getenv(releaseEnv)
	if dist == "" {
		if inCI() {
			t.Fatalf("%s is unset under CI=true: .ci/run names the release archives the tests must run", releaseEnv)
		}
		return ""
	}
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	matches, _ := filepath.Glob(filepath.Join(dist, "hearth_*_"+goos+"_amd64"+ext))
	if len(matches) != 1 {
		t.Fatalf("%s: want one %s/amd64 archive, found %q", dist, goos, matches)
	}
	// Not t.TempDir, whose parent only root enters: the doctor's test runs
	// one as nobody.
	dir, err := os.MkdirTemp("", "hearth-release-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	want := map[string]bool{"hearthd": true, "hearth": true, "hearthd.exe": true, "hearth.exe": true}
	write := func(name string, r io.Reader) {
		if !want[filepath.Base(name)] || strings.Count(name, "/") != 1 {
			return
		}
		f, err := os.OpenFile(filepath.Join(dir, filepath.Base(name)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := io.Copy(f, r); err != nil {
			t.Fatal(err)
		}
	}
	if ext == ".zip" {
		z, err := zip.OpenReader(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		for _, f := range z.File {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			write(f.Name, r)
			r.Close()
		}
	} else {
		f, err := os.Open(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			write(h.Name, tr)
		}
	}
	suffix := map[string]string{"windows": ".exe"}[goos]
	for _, b := range []string{"hearthd", "hearth"} {
		if _, err := os.Stat(filepath.Join(dir, b+suffix)); err != nil {
			t.Fatalf("%s has no %s%s: %v", matches[0], b, suffix, err)
		}
	}
	return dir
}
