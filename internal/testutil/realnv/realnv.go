// Package realnv gives tests NVIDIA's own libraries, as Debian ships them, unpacked (never installed)
// by fetch.sh beside this file into $PATHFINDER_REALNV_DIR (default ~/.cache/pathfinder-realnv).
// Tests that need them skip, saying why and what fetches them, when they were not fetched (go test
// -v shows it); with PATHFINDER_REALNV=require (CI sets it) they fail instead, so a suite that
// should have run cannot pass by skipping. Nothing is written anywhere but the test's own output. Place, Copy
// and Symlink lay the unpacked files out the way an install does (integration/ builds its layouts so).
package realnv

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// FetchCommand is what fetches the libraries, run at the repository's root.
const FetchCommand = "bash internal/testutil/realnv/fetch.sh"

// Package is one unpacked Debian package.
type Package struct {
	Suite   string // "trixie" or "bookworm"
	Name    string // "libcudart12"
	Version string // the Debian version, "12.4.127~12.4.1-2"
	Dir     string // where dpkg-deb -x unpacked it
}

// Path is rel (a path inside the package, such as "usr/lib/x86_64-linux-gnu/libcudart.so.12") under
// the package's directory.
func (p Package) Path(rel string) string { return filepath.Join(p.Dir, filepath.FromSlash(rel)) }

// Dir is the directory fetch.sh unpacks into.
func Dir() string {
	if d := os.Getenv("PATHFINDER_REALNV_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "pathfinder-realnv")
}

var manifest = sync.OnceValues(func() (map[string]Package, error) {
	f, err := os.Open(filepath.Join(Dir(), "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]Package{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 {
			continue
		}
		p := Package{Suite: fields[0], Name: fields[1], Version: fields[2], Dir: fields[3]}
		out[p.Suite+"/"+p.Name] = p
	}
	return out, sc.Err()
})

// Required reports whether the real libraries must be there (PATHFINDER_REALNV=require).
func Required() bool { return os.Getenv("PATHFINDER_REALNV") == "require" }

// Get returns the package suite/name ("trixie/libcudart12"), skipping t when the libraries were not
// fetched, failing it when they are required or the manifest lacks the package.
func Get(t testing.TB, suiteAndName string) Package {
	t.Helper()
	m, err := manifest()
	if err != nil {
		why := "NVIDIA's libraries from Debian were not fetched (run " + FetchCommand + "): " + err.Error()
		if Required() {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	p, ok := m[suiteAndName]
	if !ok {
		t.Fatalf("%s is not in %s: fetch.sh fetches it", suiteAndName, filepath.Join(Dir(), "manifest.tsv"))
	}
	return p
}
