package loadermodel

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakeelf"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// Real ELF libraries from gcc, built once per soname and class and copied where a test needs them.
var (
	libsMu  sync.Mutex
	libsDir string
	libs    = map[string]string{}
)

func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}

// builtLib returns a gcc-built shared object with this soname, 64-bit or, when m32 is set, 32-bit
// (gcc -m32; both -nostdlib, so no 32-bit libc is needed); a 32-bit one falls back to a hand-made
// ELF32 header when gcc cannot make one.
func builtLib(t testing.TB, soname string, m32 bool) string {
	t.Helper()
	return builtLibs(t, libSpec{soname, m32})[0]
}

type libSpec struct {
	soname string
	m32    bool
}

// builtLibs builds the libraries not built yet, concurrently, and returns their paths.
func builtLibs(t testing.TB, specs ...libSpec) []string {
	t.Helper()
	needTool(t, "gcc")
	libsMu.Lock()
	defer libsMu.Unlock()
	if libsDir == "" {
		d, err := os.MkdirTemp("", "ldso-test-libs-")
		if err != nil {
			t.Fatal(err)
		}
		libsDir = d
	}
	key := func(s libSpec) string {
		if s.m32 {
			return s.soname + "-m32"
		}
		return s.soname
	}
	var wg sync.WaitGroup
	errs := make([]error, len(specs))
	building := map[string]bool{}
	for i, s := range specs {
		k := key(s)
		if _, ok := libs[k]; ok || building[k] {
			continue
		}
		building[k] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(libsDir, k, s.soname)
			args := []string{"-nostdlib"}
			if s.m32 {
				args = append(args, "-m32")
			}
			err := elfso.Compile(out, s.soname, "int pathfinder_test_symbol(void) { return 42; }\n", args...)
			switch {
			case err == nil:
			case s.m32:
				errs[i] = os.WriteFile(out, fakeelf.Header(elf.ELFCLASS32, elf.EM_386, elf.ET_DYN), 0o755)
			default:
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	for i, s := range specs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if building[key(s)] {
			libs[key(s)] = filepath.Join(libsDir, key(s), s.soname)
		}
	}
	paths := make([]string, len(specs))
	for i, s := range specs {
		paths[i] = libs[key(s)]
	}
	return paths
}

func TestMain(m *testing.M) {
	code := m.Run()
	if libsDir != "" {
		os.RemoveAll(libsDir)
	}
	os.Exit(code)
}

// tree writes files under root: a value starting with "lib:" is a gcc-built library with that
// soname ("lib32:" for 32-bit), "-> target" makes a symlink, "dir" a directory, anything else is
// the file's content (filetree.Write).
func tree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	var names []string // where each library in specs is copied
	var specs []libSpec
	rest := map[string]string{}
	for name, v := range files {
		if soname, ok := strings.CutPrefix(v, "lib:"); ok {
			names, specs = append(names, name), append(specs, libSpec{soname, false})
		} else if soname, ok := strings.CutPrefix(v, "lib32:"); ok {
			names, specs = append(names, name), append(specs, libSpec{soname, true})
		} else {
			rest[name] = v
		}
	}
	filetree.Write(t, root, rest)
	for i, lib := range builtLibs(t, specs...) {
		copyFile(t, lib, filepath.Join(root, names[i]))
	}
}

// copyFile writes src's bytes at dst, executable, making the folders above it.
func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	filetree.Put(t, filepath.Dir(dst), filepath.Base(dst), data)
}

// ldconfig writes root/etc/ld.so.cache for the directories (paths inside root) with the real
// ldconfig, in format "new", "old" or "compat", and returns the file's bytes.
func ldconfig(t testing.TB, root, format string, dirs ...string) []byte {
	t.Helper()
	bin := needTool(t, "ldconfig")
	conf := filepath.Join(root, "etc", "ld.so.conf")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(strings.Join(dirs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// -r: paths inside root, so the cache is the same wherever root is; -X: no symlinks.
	cmd := exec.Command(bin, "-r", root, "-C", "/etc/ld.so.cache", "-f", "/etc/ld.so.conf", "-X", "-c", format)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, msg)
	}
	data, err := os.ReadFile(filepath.Join(root, "etc", "ld.so.cache"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// goldenTree is the tree testdata/ld.so.cache* were generated from, with goldenDirs as ld.so.conf.
var (
	goldenTree = map[string]string{
		"opt/b/libfoo.so.1":                        "lib:libfoo.so.1",
		"opt/b/glibc-hwcaps/x86-64-v3/libfoo.so.1": "lib:libfoo.so.1",
		"opt/b/glibc-hwcaps/x86-64-v2/libfoo.so.1": "lib:libfoo.so.1",
		"opt/b/libbar.so.2.1":                      "lib:libbar.so.2",
		"opt/a/libfoo.so.1":                        "lib:libfoo.so.1",
		"opt/a/libfoo.so.10":                       "lib:libfoo.so.10",
		"opt/a/libfoo.so.9":                        "lib:libfoo.so.9",
		"opt/c/libqux.so.3":                        "lib32:libqux.so.3",
	}
	goldenDirs    = []string{"/opt/b", "/opt/a", "/opt/c"}
	goldenFormats = map[string]string{"new": "ld.so.cache", "old": "ld.so.cache.old", "compat": "ld.so.cache.compat"}
)

// runProbe runs the probe (through chroot when root is set) and returns one line per name.
func runProbe(t *testing.T, root, dir, llp string, names ...string) []string {
	t.Helper()
	var cmd *exec.Cmd
	if root != "" {
		cmd = exec.Command(needTool(t, "chroot"), append([]string{root, "/probe"}, names...)...)
	} else {
		cmd = exec.Command(probe(t), names...)
	}
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LD_") && !strings.HasPrefix(kv, "GLIBC_TUNABLES=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if llp != "" {
		cmd.Env = append(cmd.Env, "LD_LIBRARY_PATH="+llp)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		t.Fatalf("%s printed %d lines for %d names:\n%s", cmd, len(lines), len(names), out)
	}
	return lines
}

// openNeeds opens p as the loader's model reads it (internal/binfmt) and returns what it needs.
func openNeeds(t testing.TB, p string) (*binfmt.ELF, binfmt.Needs) {
	t.Helper()
	f, err := binfmt.OpenELF(p)
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.Needs()
	if err != nil {
		t.Fatal(err)
	}
	return f, n
}
