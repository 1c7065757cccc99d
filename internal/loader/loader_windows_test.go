//go:build windows && !pathfinder_static

package loader

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tempDir is a directory for DLLs this process loads: t.TempDir cannot remove a loaded DLL on
// Windows, and a failed removal would fail the test.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pathfinder-loader-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// systemDLL copies System32's version.dll, a small DLL a Go test does not load by itself, to
// dir/name and returns the original's path and the copy's.
func systemDLL(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	sys := os.Getenv("SystemRoot")
	if sys == "" {
		t.Skip("SystemRoot is not set")
	}
	orig := filepath.Join(sys, "System32", "version.dll")
	if dir == "" {
		return orig, ""
	}
	in, err := os.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, name)
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return orig, dst
}

func TestLoaded_windows(t *testing.T) {
	// kernel32.dll is in every Windows process.
	l, ok := Loaded("KERNEL32.dll")
	if !ok {
		t.Fatal("kernel32.dll is not reported as loaded")
	}
	if !filepath.IsAbs(l.Path) || !strings.EqualFold(filepath.Base(l.Path), "kernel32.dll") || l.Handle == 0 {
		t.Fatalf("kernel32.dll: %+v", l)
	}
	if l, ok := Loaded("pathfinder-no-such-library.dll"); ok {
		t.Fatalf("an unknown DLL is reported loaded: %+v", l)
	}
}

func TestOpen_windows(t *testing.T) {
	abs, _ := systemDLL(t, "", "")
	tests := []struct {
		name    string
		path    string
		wantErr string
	}{
		{name: "bare name: the system search", path: "version.dll"},
		{name: "absolute path", path: abs},
		{name: "absolute path with forward slashes", path: filepath.ToSlash(abs)},
		{name: "relative path with a directory", path: `System32\version.dll`, wantErr: "relative path: refused"},
		{name: "drive-relative path", path: `C:version.dll`, wantErr: "relative path: refused"},
		{name: "not found", path: "pathfinder-no-such-library.dll", wantErr: "LoadLibraryExW pathfinder-no-such-library.dll"},
		{name: "not found by absolute path", path: filepath.Join(tempDir(t), "missing.dll"), wantErr: "LoadLibraryExW"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Open(tt.path, false)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Open(%q) = %+v, %v; want an error with %q", tt.path, l, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.EqualFold(l.Path, abs) || l.Handle == 0 {
				t.Fatalf("Open(%q) = %+v, want %s", tt.path, l, abs)
			}
			if got, ok := Loaded("version.dll"); !ok || got.Handle != l.Handle {
				t.Fatalf("after Open, Loaded = %+v, %v", got, ok)
			}
		})
	}
}

// TestOpen_noPATH shows that a bare name is not looked for in PATH, and is in a directory added
// with AddDLLDirectory; and that an absolute path loads.
func TestOpen_noPATH(t *testing.T) {
	dir := tempDir(t)
	_, dll := systemDLL(t, dir, "pathfinder-version.dll")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if l, err := Open("pathfinder-version.dll", false); err == nil {
		t.Fatalf("found through PATH: %+v", l)
	}
	if err := AddDLLDirectory(dir); err != nil {
		t.Fatal(err)
	}
	l, err := Open("pathfinder-version.dll", false)
	if err != nil {
		t.Fatalf("not found in a directory AddDLLDirectory added: %v", err)
	}
	if !strings.EqualFold(l.Path, dll) {
		t.Fatalf("loaded %s, want %s", l.Path, dll)
	}
	_, dll2 := systemDLL(t, dir, "pathfinder-version2.dll")
	if l, err := Open(dll2, false); err != nil || !strings.EqualFold(l.Path, dll2) {
		t.Fatalf("Open(%s) = %+v, %v", dll2, l, err)
	}
}

func TestAddDLLDirectory_windows(t *testing.T) {
	dir := tempDir(t)
	t.Setenv("PATH", os.Getenv("PATH"))
	if err := AddDLLDirectory(dir); err != nil {
		t.Fatal(err)
	}
	if err := AddDLLDirectory(filepath.ToSlash(dir) + "/"); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range filepath.SplitList(os.Getenv("PATH")) {
		if strings.EqualFold(filepath.Clean(e), dir) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%s is %d times in PATH, want once", dir, n)
	}
	if err := AddDLLDirectory("relative"); err == nil {
		t.Fatal("a relative directory was added")
	}
}
