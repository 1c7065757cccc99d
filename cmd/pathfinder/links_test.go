//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestLinks_output: what README promises a user sees of a library reached through links that lead
// out of CUDA_HOME: path inside it and real_path in find --json and load --json, and every link as
// LINK → TARGET in explain.
func TestLinks_output(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	store, root := t.TempDir(), t.TempDir()
	real := filepath.Join(store, "cuda_cudart-12.4/lib/libcudart.so.12.4.127")
	gccLib(t, real, "libcudart.so.12")
	soname := filepath.Join(store, "cuda_cudart-12.4/lib/libcudart.so.12")
	link := filepath.Join(root, "lib64/libcudart.so.12")
	filetree.Symlink(t, "libcudart.so.12.4.127", soname)
	filetree.Symlink(t, soname, link)
	e.Setenv("CUDA_HOME", root)
	out, _, code := e.run(t, "explain", "cudart")
	for _, want := range []string{"✓ " + link + "  (found via CUDA_HOME)", link + " → " + soname, soname + " → libcudart.so.12.4.127"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("explain cudart: exit %d, no line with %q:\n%s", code, want, out)
		}
	}
	for _, cmd := range []string{"find", "load"} {
		out, stderr, code := e.runChild(t, cmd, "--json", "cudart") // what it loads stays out of this process
		libs := jsonLines[struct {
			Path     string `json:"path"`
			RealPath string `json:"real_path"`
			FoundVia string `json:"found_via"`
		}](t, out)
		if code != 0 || len(libs) != 1 || libs[0].Path != link || libs[0].RealPath != real || libs[0].FoundVia != "CUDA_HOME" {
			t.Fatalf("%s --json cudart: exit %d, %+v (%s); want %s, real_path %s, via CUDA_HOME", cmd, code, libs, stderr, link, real)
		}
	}
	// A link to a file that is no library is refused, and explain says where it led.
	evil := t.TempDir()
	passwd := filepath.Join(evil, "lib64/libcudart.so.12")
	filetree.Symlink(t, "/etc/passwd", passwd)
	e.Setenv("CUDA_HOME", evil)
	out, _, code = e.run(t, "explain", "cudart")
	for _, want := range []string{"✗ " + passwd + "  refused: not an ELF file", passwd + " → /etc/passwd"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("explain cudart, a link to /etc/passwd: exit %d, no line with %q:\n%s", code, want, out)
		}
	}
	if r := readme(t); !strings.Contains(r, "find --json and load --json add real_path where links lead elsewhere (told by the walk that opened the file checked and loaded, so that it names that file however another user re-points a link meanwhile), and explain prints LINK → TARGET for every link on the way, of a candidate refused too") {
		t.Error("README does not promise what this test holds")
	}
}
