//go:build linux

package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// cacheSite is a machine with cudart under CUDA_PATH, in a directory every user may read, so that
// the command can also run as another user.
func cacheSite(t *testing.T) (base, lib string) {
	t.Helper()
	base, err := os.MkdirTemp("", "pathfinder-cache-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	lib = filepath.Join(base, "cuda/lib64/libcudart.so.13")
	gccLib(t, lib, "libcudart.so.13")
	return base, lib
}

// TestDoctor_cacheOff: a cache that is off without being turned off is a problem doctor names with
// its reason, and `doctor --all` gives the reason beside "(off"; a cache turned off on purpose is no
// problem. find says nothing of either, and no directory above the cache's own is ever made.
func TestDoctor_cacheOff(t *testing.T) {
	t.Parallel()
	base, lib := cacheSite(t)
	missing := filepath.Join(base, "nonexistent")
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("not a directory"), 0o644)
	tests := []struct {
		name    string
		env     map[string]string
		problem string // the title of doctor's problem; "" for none
		off     string // what `doctor --all` says of the cache
	}{
		{
			name: "HOME that does not exist", env: map[string]string{"HOME": missing, "PATHFINDER_CACHE_DIR": ""},
			problem: "the cache is off: " + missing + "/.cache/pathfinder (from $HOME): " + missing + " does not exist",
			off:     "(off: " + missing + "/.cache/pathfinder (from $HOME): " + missing + " does not exist",
		},
		{
			name: "relative PATHFINDER_CACHE_DIR", env: map[string]string{"PATHFINDER_CACHE_DIR": "cache"},
			problem: `the cache is off: $PATHFINDER_CACHE_DIR "cache" is a relative path`,
			off:     `(off: $PATHFINDER_CACHE_DIR "cache" is a relative path`,
		},
		{
			name: "in a directory others may write", env: map[string]string{"PATHFINDER_CACHE_DIR": filepath.Join(open, "cache")},
			problem: "the cache is off: " + open + "/cache (from $PATHFINDER_CACHE_DIR): not used: directory " + open + " is writable by others",
			off:     "(off: " + open + "/cache (from $PATHFINDER_CACHE_DIR): not used: directory " + open + " is writable by others",
		},
		{
			name: "a file where the cache dir should be", env: map[string]string{"PATHFINDER_CACHE_DIR": file},
			problem: "the cache is off: " + file + " (from $PATHFINDER_CACHE_DIR): not a directory",
			off:     "(off: " + file + " (from $PATHFINDER_CACHE_DIR): not a directory)",
		},
		{name: "turned off", env: map[string]string{"PATHFINDER_NO_CACHE": "1"}, off: "(off: PATHFINDER_NO_CACHE=1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := isolate(t)
			e.Setenv("CUDA_PATH", filepath.Dir(filepath.Dir(lib)))
			for k, v := range tt.env {
				e.Setenv(k, v)
			}
			out, errOut, _ := e.run(t, "doctor")
			if got := strings.Contains(out, "✗ the cache "); got != (tt.problem != "") || !strings.Contains(out, "✗ "+tt.problem) {
				t.Errorf("doctor: want the problem %q (none when empty); got:\n%s%s", tt.problem, out, errOut)
			}
			if out, _, _ := e.run(t, "doctor", "--all"); !strings.Contains(out, "  cache          "+tt.off) {
				t.Errorf("doctor --all: want the cache line to say %q; got:\n%s", tt.off, out)
			}
			if out, errOut, code := e.run(t, "find", "cudart"); code != exitOK || strings.TrimSpace(out) != lib || errOut != "" {
				t.Errorf("find: exit %d, %q, stderr %q; want %s and nothing on stderr", code, out, errOut, lib)
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Errorf("%s was made: %v", missing, err)
			}
		})
	}
}

// TestCache_unwritable gives the command a cache it cannot write — a full tmpfs, a tmpfs of three
// inodes, a read-only bind mount (each in a private mount namespace: unshare -m), a directory of
// mode 0555 for another user — and an empty one, so every run must write: answers stay right, find
// says nothing, and doctor names the cache with the reason.
func TestCache_unwritable(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts in a private mount namespace, runs as another user")
	}
	if b, err := exec.Command("unshare", "-m", "true").CombinedOutput(); err != nil {
		t.Skipf("no private mount namespace here (unshare -m: %v %s)", err, b)
	}
	bin := noCgoBinary(t)
	os.Chmod(filepath.Dir(bin), 0o755) // the user nobody runs it too
	tests := []struct {
		name   string
		setup  string // shell run in the namespace before the command; $M is a directory of the test's, $M/cache the cache
		prefix []string
		reason string
	}{
		{name: "a full tmpfs", reason: "no space left on device",
			setup: `mount -t tmpfs -o size=64k tmpfs "$M" && mkdir "$M/cache" && { head -c 1M /dev/zero > "$M/fill" 2>/dev/null; true; }`},
		{name: "a tmpfs of three inodes", reason: "no space left on device",
			setup: `mount -t tmpfs -o nr_inodes=3 tmpfs "$M" && mkdir "$M/cache"`},
		{name: "a read-only bind mount", reason: "read-only file system",
			setup: `mkdir -p "$M/cache" && mount --bind "$M/cache" "$M/cache" && mount -o remount,bind,ro "$M/cache"`},
		{name: "mode 0555, for another user", reason: "permission denied",
			setup:  `mkdir -p "$M/cache" && chmod 0555 "$M/cache"`,
			prefix: []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := isolate(t)
			base, lib := cacheSite(t)
			m := filepath.Join(base, "m")
			os.Mkdir(m, 0o755)
			cache := filepath.Join(m, "cache")
			runIn := func(args ...string) (string, string, int) {
				script := tt.setup + ` && exec "$@"`
				cmd := exec.Command("unshare", append(append([]string{"-m", "sh", "-c", script, "sh"}, tt.prefix...), append([]string{bin}, args...)...)...)
				cmd.Env = e.Environ("M="+m, "PATHFINDER_CACHE_DIR="+cache, "CUDA_PATH="+filepath.Join(base, "cuda"),
					"HOME="+base, "XDG_CONFIG_HOME="+filepath.Join(base, "config"))
				return runCommand(t, cmd)
			}
			for range 2 { // the second finds nothing the first could keep
				if out, errOut, code := runIn("find", "cudart"); code != exitOK || strings.TrimSpace(out) != lib || errOut != "" {
					t.Fatalf("find: exit %d, %q, stderr %q; want %s and nothing on stderr", code, out, errOut, lib)
				}
			}
			out, errOut, _ := runIn("doctor")
			want := "✗ the cache " + cache + " cannot be written: " + tt.reason
			if !strings.Contains(out, want) {
				t.Fatalf("doctor: want %q; got:\n%s%s", want, out, errOut)
			}
			if !regexp.MustCompile(`libraries +1 of `).MatchString(out) {
				t.Errorf("doctor's answers changed with the cache:\n%s", out)
			}
		})
	}
}

// TestCache_killedWriter kills the command at a rename — the moment a cache file or a compiled
// module's directory is put in place — with strace's fault injection, at each kind of write: the
// cache's own index of the catalog, the compiled module, a find answer. What the killed writer left
// (a .tmp-* file or directory) is removed by later runs, which answer right: after two runs nothing
// temporary is left, and the third is answered from the cache it wrote, writing nothing.
func TestCache_killedWriter(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace not on PATH")
	}
	if b, err := exec.Command("strace", "-qq", "-o", "/dev/null", "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v %s", err, b)
	}
	bin := noCgoBinary(t)
	tests := []struct {
		name   string
		remove []string // what is taken out of a complete cache before the killed run: its first rename is there
	}{
		{name: "an empty cache: the catalog's index"},
		{name: "the compiled module", remove: []string{"results", "wazero-*"}}, // with its answer, it is not needed
		{name: "a find answer", remove: []string{"results"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := isolate(t)
			base, lib := cacheSite(t)
			cache := filepath.Join(base, "cache")
			env := []string{"PATHFINDER_CACHE_DIR=" + cache, "CUDA_PATH=" + filepath.Join(base, "cuda")}
			find := func(what string, prefix ...string) int {
				cmd := exec.Command(prefix[0], append(prefix[1:], bin, "find", "cudart")...)
				cmd.Env = e.Environ(env...)
				out, errOut, code := runCommand(t, cmd)
				if len(prefix) == 1 && (code != exitOK || strings.TrimSpace(out) != lib) {
					t.Fatalf("%s: exit %d, %q %q; want %s", what, code, out, errOut, lib)
				}
				return code
			}
			if tt.remove != nil {
				find("filling the cache", "env")
			}
			for _, r := range tt.remove {
				dirs, _ := filepath.Glob(filepath.Join(cache, r))
				if len(dirs) != 1 {
					t.Fatalf("%s in the cache: %v", r, dirs)
				}
				os.RemoveAll(dirs[0])
			}
			// Every thread's first rename kills the process: the first rename of the run. strace
			// ends as its tracee did: killed (-1 here), or exit 137 where a shell stands between.
			if code := find("the killed run", "strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=/^rename", "-e", "inject=/^rename:signal=KILL:when=1"); code != -1 && code != 128+9 {
				t.Fatalf("the run under strace exited %d, want killed", code)
			}
			if left := temporaries(t, cache); len(left) == 0 {
				t.Fatal("the killed run left nothing temporary: it was not killed at a write")
			}
			find("the first run after", "env")
			find("the second run after", "env")
			if left := temporaries(t, cache); len(left) != 0 {
				t.Fatalf("left after two runs: %v", left)
			}
			before := cacheEntries(t, cache, 1)
			find("the third run after", "env")
			if after := cacheEntries(t, cache, 1); !equalMaps(before, after) {
				t.Errorf("the third run rewrote the cache: before %v, after %v", before, after)
			}
		})
	}
}

// temporaries lists what is temporary in the cache: .tmp-* files and directories, wazero's *.tmp.
func temporaries(t *testing.T, cache string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (strings.HasPrefix(d.Name(), ".tmp-") || strings.HasSuffix(d.Name(), ".tmp")) {
			rel, _ := filepath.Rel(cache, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// TestCache_coldProcesses starts processes together on an empty cache, as a cluster's jobs do: each
// compiles the builtin module and writes it. The module's directory and its checksum must appear
// whole, from one of them: a later process whose find answer is gone uses the module as it is,
// writing, renaming and making nothing in the compilation cache.
func TestCache_coldProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	e := isolate(t)
	base, lib := cacheSite(t)
	env := []string{"CUDA_PATH=" + filepath.Join(base, "cuda")}
	find := func(cache string) *exec.Cmd {
		cmd := exec.Command(bin, "find", "cudart")
		cmd.Env = e.Environ(append(env, "PATHFINDER_CACHE_DIR="+cache)...)
		return cmd
	}
	rounds, procs := 3, 8
	for round := range rounds {
		cache := filepath.Join(base, fmt.Sprint("cache", round))
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for range procs {
			cmd := find(cache)
			out := &strings.Builder{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs = append(cmds, cmd), append(outs, out)
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil || strings.TrimSpace(outs[i].String()) != lib {
				t.Fatalf("round %d, process %d: %v %q; want %s", round, i, err, outs[i], lib)
			}
		}
		if left := temporaries(t, cache); len(left) != 0 {
			t.Fatalf("round %d: left behind: %v", round, left)
		}
		os.RemoveAll(filepath.Join(cache, "results"))
		wazero, _ := filepath.Glob(filepath.Join(cache, "wazero-*"))
		if len(wazero) != 1 {
			t.Fatalf("round %d: %v", round, wazero)
		}
		before := treeState(t, wazero[0])
		if out, errOut, code := runCommand(t, find(cache)); code != exitOK || strings.TrimSpace(out) != lib {
			t.Fatalf("round %d, after: exit %d %q %q", round, code, out, errOut)
		}
		if after := treeState(t, wazero[0]); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("round %d: the compiled module was not used as it was:\nbefore %v\nafter  %v", round, before, after)
		}
	}
}

// treeState is every file and directory under dir with what a write changes: its inode, size and
// modification time (a directory's changes when anything is made, renamed or removed in it).
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fmt.Sprintf("%d %d %d.%09d", st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
		return nil
	})
	return out
}
