// Command release cross-builds hearth's release archives from a clean
// tree: for each target both binaries, README.md, docs/*.md and LICENSE in a .tar.gz
// (a .zip for Windows), and SHA256SUMS over them. The archives are
// reproducible: static binaries built with -trimpath and no build id, and
// archive entries in a fixed order with the commit's time, root's owner
// and fixed modes, so two runs on one commit give the same bytes.
// It is the release: it needs nothing but Go, so CI runs it (.ci/run).
//
//	go run ./tools/release [-out dist] [-dirty-ok]
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/version"
)

// Targets are the systems a release is built for.
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

const versionPkg = "github.com/hearth-mcp/hearth/pkg/version"

func main() {
	out := flag.String("out", "dist", "the directory to write the archives and SHA256SUMS into (emptied first)")
	dirtyOK := flag.Bool("dirty-ok", false, "build from a tree with uncommitted changes (the archives then do not match the commit)")
	flag.Parse()
	if err := run(*out, *dirtyOK); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(out string, dirtyOK bool) error {
	status, err := git("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return err
	}
	if status != "" && !dirtyOK {
		return fmt.Errorf("the tree has uncommitted changes; commit them or pass -dirty-ok:\n%s", status)
	}
	commit, err := git("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return err
	}
	ct, err := git("log", "-1", "--format=%ct")
	if err != nil {
		return err
	}
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return fmt.Errorf("commit time %q: %w", ct, err)
	}
	mtime := time.Unix(secs, 0).UTC()
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	build, err := os.MkdirTemp("", "hearth-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(build)
	ldflags := fmt.Sprintf("-s -w -buildid= -X %s.Version=%s -X %s.Commit=%s", versionPkg, version.Version, versionPkg, commit)
	extra := map[string][]byte{}
	// The README links into docs/: its guides go with it (the decisions
	// and the rest stay in the repository).
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		return err
	}
	for _, f := range append([]string{"README.md", "LICENSE"}, docs...) {
		if extra[filepath.ToSlash(f)], err = os.ReadFile(f); err != nil {
			return err
		}
	}
	sums := map[string]string{}
	for _, t := range Targets {
		goos, goarch, _ := strings.Cut(t, "/")
		exe := ""
		if goos == "windows" {
			exe = ".exe"
		}
		files := map[string][]byte{}
		for name, v := range extra {
			files[name] = v
		}
		for _, b := range []struct{ name, pkg string }{{"hearthd", "./daemon/hearthd"}, {"hearth", "./shim/hearth"}} {
			bin := filepath.Join(build, t, b.name+exe)
			cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, b.pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("build %s for %s: %w", b.name, t, err)
			}
			if files[b.name+exe], err = os.ReadFile(bin); err != nil {
				return err
			}
		}
		base := fmt.Sprintf("hearth_%s_%s_%s", version.Version, goos, goarch)
		var data []byte
		name := base + ".tar.gz"
		if goos == "windows" {
			name = base + ".zip"
			data, err = zipArchive(base, files, mtime)
		} else {
			data, err = tarArchive(base, files, mtime)
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		sums[name] = hex.EncodeToString(sum[:])
		fmt.Println("wrote", filepath.Join(out, name))
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(sumsFile(sums)), 0o644); err != nil {
		return err
	}
	fmt.Println("wrote", filepath.Join(out, "SHA256SUMS"))
	for _, p := range packaging {
		tmpl, err := os.ReadFile(p.template)
		if err != nil {
			return err
		}
		text, err := fill(string(tmpl), version.Version, sums)
		if err != nil {
			return fmt.Errorf("%s: %w", p.template, err)
		}
		if err := os.WriteFile(filepath.Join(out, p.name), []byte(text), 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join(out, p.name))
	}
	return nil
}

// packaging are the package managers' recipes, filled in with the
// version and the archives' sums (fill).
var packaging = []struct{ template, name string }{
	{"packaging/homebrew/hearth.rb", "hearth.rb"},
	{"packaging/scoop/hearth.json", "hearth.json"},
}

// fill replaces @VERSION@ and @SHA256_<os>_<arch>@ (sums are by archive
// name) and refuses a placeholder left over: a recipe with one would
// install nothing.
func fill(tmpl, ver string, sums map[string]string) (string, error) {
	pairs := []string{"@VERSION@", ver}
	for name, sum := range sums {
		base := strings.TrimSuffix(strings.TrimSuffix(name, ".tar.gz"), ".zip")
		parts := strings.Split(base, "_") // hearth_<version>_<os>_<arch>
		if len(parts) != 4 {
			return "", fmt.Errorf("archive name %q is not hearth_VERSION_OS_ARCH", name)
		}
		pairs = append(pairs, "@SHA256_"+parts[2]+"_"+parts[3]+"@", sum)
	}
	text := strings.NewReplacer(pairs...).Replace(tmpl)
	if i := strings.Index(text, "@SHA256_"); i >= 0 {
		end := min(len(text), i+40)
		return "", fmt.Errorf("no archive for the placeholder at %q", text[i:end])
	}
	if strings.Contains(text, "@VERSION@") {
		return "", fmt.Errorf("@VERSION@ left")
	}
	return text, nil
}

// sumsFile is sha256sum's format, by name: `sha256sum -c SHA256SUMS` checks it.
func sumsFile(sums map[string]string) string {
	var b strings.Builder
	for _, name := range sortedNames(sums) {
		fmt.Fprintf(&b, "%s  %s\n", sums[name], name)
	}
	return b.String()
}

// mode is an entry's permission bits: the binaries are executable.
func mode(name string) int64 {
	switch strings.TrimSuffix(name, ".exe") {
	case "hearth", "hearthd":
		return 0o755
	}
	return 0o644
}

// tarArchive is a gzipped tar of files under dir/, reproducibly.
func tarArchive(dir string, files map[string][]byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // no name, no time in the gzip header
	tw := tar.NewWriter(gz)
	for _, name := range sortedNames(files) {
		hdr := &tar.Header{Name: dir + "/" + name, Mode: mode(name), Size: int64(len(files[name])), ModTime: mtime,
			Typeflag: tar.TypeReg, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipArchive is a zip of files under dir/, reproducibly.
func zipArchive(dir string, files map[string][]byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedNames(files) {
		h := &zip.FileHeader{Name: dir + "/" + name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(mode(name)))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
