//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFault_twoProcesses builds pathfinder and runs two of it at once on one empty cache directory:
// both compile the builtin module, both search and write every result. Both must answer right, every
// entry must be well formed, and a third run must be answered from them: it rewrites none (a search
// or a compile replaces its entry, with a new inode).
func TestFault_twoProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	e := isolate(t)
	site, cache := t.TempDir(), t.TempDir()
	want := map[string]string{}
	for name, soname := range map[string]string{"cudart": "libcudart.so.13", "nvrtc": "libnvrtc.so.13", "cufft": "libcufft.so.12"} {
		want[name] = filepath.Join(site, "nvidia/cu13/lib", soname)
		gccLib(t, want[name], soname)
	}
	args := []string{"find", "cudart", "nvrtc", "cufft", "nppc", "nvjpeg", "--json"}
	runAll := func(n int) []string {
		var cmds []*exec.Cmd
		outs := make([]*bytes.Buffer, n)
		for i := range n {
			cmd := exec.Command(bin, args...)
			cmd.Env = e.Environ("PATHFINDER_SITE_PACKAGES="+site, "PATHFINDER_CACHE_DIR="+cache)
			outs[i] = &bytes.Buffer{}
			cmd.Stdout, cmd.Stderr = outs[i], outs[i]
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		var got []string
		for i, cmd := range cmds {
			if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != exitNotFound {
				t.Fatalf("process %d: %v, want exit %d\n%s", i, err, exitNotFound, outs[i])
			}
			got = append(got, outs[i].String())
		}
		return got
	}

	start := time.Now()
	outs := runAll(2)
	together := time.Since(start)
	for i, out := range outs {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 5 {
			t.Fatalf("process %d: %d lines, want 5:\n%s", i, len(lines), out)
		}
		for _, l := range lines {
			var line struct{ Name, Path, Error string }
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("process %d: %v: %s", i, err, l)
			}
			if w, found := want[line.Name]; found && line.Path != w || !found && line.Error != "not-found" {
				t.Errorf("process %d: %s; want %q", i, l, w)
			}
		}
		if out != outs[0] {
			t.Errorf("the processes disagree:\n%s\n%s", outs[0], out)
		}
	}

	entries := cacheEntries(t, cache, 5)
	start = time.Now()
	if third := runAll(1)[0]; third != outs[0] {
		t.Errorf("the third run disagrees:\n%s\n%s", outs[0], third)
	}
	t.Logf("two processes at once on an empty cache: %v; a third after them: %v", together.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if again := cacheEntries(t, cache, 5); !equalMaps(again, entries) {
		t.Errorf("the third run rewrote the cache: before %v, after %v", entries, again)
	}
}

// cacheEntries maps each file in the cache to its inode, and checks that nothing was left half
// written and that each compiled module is one (wazero's files start with "WAZEVO").
func cacheEntries(t *testing.T, cache string, wantResults int) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	modules, results := 0, 0
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(cache, p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.Contains(d.Name(), "tmp"):
			t.Errorf("left behind: %s", rel)
		case strings.HasPrefix(rel, "wazero-") && len(d.Name()) == 64 && strings.Trim(d.Name(), "0123456789abcdef") == "":
			modules++ // wazero names each compiled module by a sha256
			if !bytes.HasPrefix(b, []byte("WAZEVO")) {
				t.Errorf("compiled module %s is not well formed", rel)
			}
		case strings.HasPrefix(rel, "results"):
			results++ // its format is the host's: that the third run uses it, unchanged, is the check
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		out[rel] = st.Ino
		return nil
	})
	if modules != 1 || results != wantResults {
		t.Errorf("%d compiled modules and %d results in the cache, want 1 and %d", modules, results, wantResults)
	}
	return out
}

func equalMaps(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
