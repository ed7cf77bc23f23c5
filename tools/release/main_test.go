package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sumsFor is a sum per target archive, each different.
func sumsFor() map[string]string {
	sums := map[string]string{}
	for i, t := range Targets {
		goos, goarch, _ := strings.Cut(t, "/")
		ext := ".tar.gz"
		if goos == "windows" {
			ext = ".zip"
		}
		sums["hearth_1.2.3_"+goos+"_"+goarch+ext] = strings.Repeat(string(rune('a'+i)), 64)
	}
	return sums
}

// The Scoop manifest, filled in, is valid JSON naming the Windows archive
// and its sum; the Homebrew formula is valid Ruby (ruby -c, where ruby is
// installed) with every placeholder filled.
func TestPackagingRecipes(t *testing.T) {
	sums := sumsFor()
	for _, p := range packaging {
		tmpl, err := os.ReadFile(filepath.Join("..", "..", p.template))
		if err != nil {
			t.Fatal(err)
		}
		text, err := fill(string(tmpl), "1.2.3", sums)
		if err != nil {
			t.Fatalf("%s: %v", p.template, err)
		}
		switch filepath.Ext(p.name) {
		case ".json":
			var m struct {
				Version      string
				Bin          []string
				Architecture map[string]struct{ URL, Hash, Extract_dir string }
			}
			if err := json.Unmarshal([]byte(text), &m); err != nil {
				t.Fatalf("%s is not valid JSON: %v", p.template, err)
			}
			a := m.Architecture["64bit"]
			if m.Version != "1.2.3" || !strings.HasSuffix(a.URL, "/v1.2.3/hearth_1.2.3_windows_amd64.zip") ||
				a.Hash != sums["hearth_1.2.3_windows_amd64.zip"] || len(m.Bin) != 2 {
				t.Fatalf("%s filled in wrong: %+v", p.template, m)
			}
		case ".rb":
			for name, sum := range sums {
				if !strings.Contains(name, "windows") && !strings.Contains(text, sum) {
					t.Errorf("%s lacks the sum of %s", p.template, name)
				}
			}
			ruby, err := exec.LookPath("ruby")
			if err != nil {
				t.Logf("ruby is not installed: the formula's syntax is not checked")
				continue
			}
			f := filepath.Join(t.TempDir(), p.name)
			os.WriteFile(f, []byte(text), 0o644)
			if out, err := exec.Command(ruby, "-c", f).CombinedOutput(); err != nil {
				t.Fatalf("ruby -c %s: %v\n%s", p.template, err, out)
			}
		}
	}
}

func TestFillRefusesAMissingArchive(t *testing.T) {
	sums := sumsFor()
	delete(sums, "hearth_1.2.3_darwin_arm64.tar.gz")
	if _, err := fill("x @SHA256_darwin_arm64@", "1.2.3", sums); err == nil {
		t.Fatal("a placeholder without an archive was left in")
	}
}

// The archives are the same bytes from the same input, hold their files
// under one directory, and keep the binaries executable.
func TestArchivesReproducible(t *testing.T) {
	files := map[string][]byte{"hearthd": []byte("d"), "hearth": []byte("s"), "README.md": []byte("r")}
	mtime := time.Unix(1700000000, 0)
	for _, kind := range []string{"tar", "zip"} {
		mk := tarArchive
		if kind == "zip" {
			mk = zipArchive
		}
		a, err := mk("hearth_1_linux_amd64", files, mtime)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := mk("hearth_1_linux_amd64", files, mtime)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: two runs differ", kind)
		}
		got := map[string]int64{}
		if kind == "tar" {
			gz, err := gzip.NewReader(bytes.NewReader(a))
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
				got[h.Name] = h.Mode
			}
		} else {
			zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				got[f.Name] = int64(f.Mode().Perm())
			}
		}
		want := map[string]int64{"hearth_1_linux_amd64/hearthd": 0o755, "hearth_1_linux_amd64/hearth": 0o755, "hearth_1_linux_amd64/README.md": 0o644}
		if len(got) != len(want) {
			t.Fatalf("%s: entries %v", kind, got)
		}
		for n, m := range want {
			if got[n] != m {
				t.Errorf("%s: %s mode %o, want %o", kind, n, got[n], m)
			}
		}
	}
}
