package loadermodel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakeelf"
)

// The tests here hold the model against the real loader: a small C program dlopen()s each name
// it is given and prints the link map's l_name ("OK /path") or dlerror() ("ERR message").
const probeSource = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		struct link_map *map = NULL;
		if (h == NULL)
			printf("ERR %s\n", dlerror());
		else if (dlinfo(h, RTLD_DI_LINKMAP, &map) != 0 || map == NULL)
			printf("ERR dlinfo: %s\n", dlerror());
		else
			printf("OK %s\n", map->l_name);
	}
	return 0;
}
`

var (
	probeOnce sync.Once
	probePath string
	probeErr  error
)

// probe builds the probe once: gcc -o probe probe.c -ldl.
func probe(t *testing.T) string {
	t.Helper()
	gcc := needTool(t, "gcc")
	probeOnce.Do(func() {
		libsMu.Lock()
		defer libsMu.Unlock()
		if libsDir == "" {
			libsDir, probeErr = os.MkdirTemp("", "ldso-test-libs-")
			if probeErr != nil {
				return
			}
		}
		src := filepath.Join(libsDir, "probe.c")
		probePath = filepath.Join(libsDir, "probe")
		if probeErr = os.WriteFile(src, []byte(probeSource), 0o644); probeErr != nil {
			return
		}
		if out, err := exec.Command(gcc, "-o", probePath, src, "-ldl").CombinedOutput(); err != nil {
			probeErr = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if probeErr != nil {
		t.Fatalf("building the probe: %v", probeErr)
	}
	return probePath
}

// agree fails unless the model's answer for name is the loader's line.
func agree(t *testing.T, l *Loader, name, line string) {
	t.Helper()
	res, err := l.Resolve(name)
	var re *ResolveError
	errors.As(err, &re)
	tried := func() string {
		var b strings.Builder
		ts := res.Tried
		if re != nil {
			ts = re.Tried
		}
		for _, a := range ts {
			b.WriteString("\n\t" + a.Path + ": " + a.Reason)
		}
		return b.String()
	}
	switch {
	case errors.Is(err, ErrUnmodeled):
		// The model declines to answer rather than guess: nothing to compare.
	case strings.HasPrefix(line, "OK "):
		real := strings.TrimPrefix(line, "OK ")
		if err != nil {
			t.Errorf("dlopen(%q) loads %s; the model says %v%s", name, real, err, tried())
		} else if res.Path != real {
			t.Errorf("dlopen(%q) loads %s; the model says %s via %s%s", name, real, res.Path, res.Via, tried())
		}
	case strings.HasPrefix(line, "ERR "):
		msg := strings.TrimPrefix(line, "ERR ")
		switch {
		case err == nil:
			t.Errorf("dlopen(%q) fails (%s); the model finds %s via %s", name, msg, res.Path, res.Via)
		case errors.Is(err, ErrBadLibrary):
			// glibc names the file it stopped at.
			if !strings.HasPrefix(msg, re.Path+": ") {
				t.Errorf("dlopen(%q) fails with %q; the model stops at %s (%s)", name, msg, re.Path, re.Reason)
			}
		case errors.Is(err, ErrNotFound):
			// glibc names the library it did not find.
			if !strings.HasPrefix(msg, name+": ") {
				t.Errorf("dlopen(%q) fails with %q; the model does not find it%s", name, msg, tried())
			}
		default:
			t.Errorf("dlopen(%q) fails with %q; the model fails with %v", name, msg, err)
		}
	default:
		t.Fatalf("probe line %q", line)
	}
}

// hostSubdirNames are hwcaps subdirectory names the loader of this machine may search.
func hostSubdirNames() (glibcHWCaps []string, legacy []string) {
	switch hostMachine() {
	case elf.EM_X86_64:
		return []string{"x86-64-v2", "x86-64-v3", "x86-64-v4"}, []string{"tls", "x86_64", "haswell", "avx512_1", "xeon_phi"}
	case elf.EM_AARCH64:
		return nil, []string{"tls", "aarch64", "atomics"}
	}
	return nil, nil
}

// TestResolve_MatchesDlopen compares the model with the real loader on LD_LIBRARY_PATH searches
// in real directories; names not found there go on to this machine's cache and default
// directories, for both.
func TestResolve_MatchesDlopen(t *testing.T) {
	if testing.Short() {
		t.Skip("runs gcc and the real loader")
	}
	probe(t)
	base := t.TempDir()
	cwd := t.TempDir() // empty: the loader's searches of the working directory find nothing
	d := func(name string) string { return filepath.Join(base, name) }
	files := map[string]string{
		"a/libpfa.so.1":      "lib:libpfa.so.1",
		"b/libpfa.so.1":      "lib:libpfa.so.1",
		"w32/libpfa.so.1":    "lib32:libpfa.so.1",
		"arm/libpfa.so.1":    string(fakeelf.Header(elf.ELFCLASS64, elf.EM_AARCH64, elf.ET_DYN)),
		"x86/libpfa.so.1":    string(fakeelf.Header(elf.ELFCLASS64, elf.EM_X86_64, elf.ET_DYN)),
		"text/libpfa.so.1":   "INPUT(libpfa.so.1.0) /* a linker script */" + strings.Repeat(" ", 64),
		"short/libpfa.so.1":  "tiny",
		"rel/libpfa.so.1":    string(fakeelf.Header(elf.ELFCLASS64, hostMachine(), elf.ET_REL)),
		"dir/libpfa.so.1":    "dir",
		"sym/libpfa.so.1":    "-> ../a/libpfa.so.1",
		"$x/libpfa.so.1":     "lib:libpfa.so.1",
		"file":               "a file, not a directory",
		"hwall/libpfa.so.1":  "lib:libpfa.so.1",
		"hwsome/libpfa.so.1": "lib:libpfa.so.1",
	}
	named, legacy := hostSubdirNames()
	for _, n := range named {
		files["hwall/glibc-hwcaps/"+n+"/libpfa.so.1"] = "lib:libpfa.so.1"
	}
	if len(named) > 0 {
		files["hwsome/glibc-hwcaps/"+named[0]+"/libpfa.so.1"] = "lib:libpfa.so.1"
		files["hwlegacy/glibc-hwcaps/"+named[0]+"/libpfa.so.1"] = "lib:libpfa.so.1"
	}
	files["hwlegacy/tls/libpfa.so.1"] = "lib:libpfa.so.1"
	for _, n := range legacy {
		files["legacy-"+n+"/"+n+"/libpfa.so.1"] = "lib:libpfa.so.1"
		files["legacy-"+n+"/libpfa.so.1"] = "lib:libpfa.so.1"
		files["legacy-tls-"+n+"/tls/"+n+"/libpfa.so.1"] = "lib:libpfa.so.1"
		files["legacy-tls-"+n+"/libpfa.so.1"] = "lib:libpfa.so.1"
	}
	tree(t, base, files)

	tests := []struct {
		name string
		llp  string
		lib  string // default libpfa.so.1
	}{
		{name: "order", llp: d("a") + ":" + d("b")},
		{name: "semicolon", llp: d("nonexistent") + ";" + d("b")},
		{name: "empty entries", llp: ":" + d("a") + "::"},
		{name: "relative entry", llp: "a:" + d("b")},
		{name: "trailing slashes and repeats", llp: d("w32") + "//:" + d("w32") + ":" + d("b") + "/"},
		{name: "dot-dot in an entry", llp: d("w32") + "/../b"},
		{name: "32-bit library first", llp: d("w32") + ":" + d("a")},
		{name: "32-bit library only", llp: d("w32")},
		{name: "other machine first", llp: d("arm") + ":" + d("a")},
		{name: "not ELF first", llp: d("text") + ":" + d("a")},
		{name: "short file first", llp: d("short") + ":" + d("a")},
		{name: "object file first", llp: d("rel") + ":" + d("a")},
		{name: "directory first", llp: d("dir") + ":" + d("a")},
		{name: "symlink", llp: d("sym")},
		{name: "a file as a directory", llp: d("file") + ":" + d("a/libpfa.so.1") + ":" + d("b")},
		{name: "a dollar that is no token", llp: d("$x") + ":" + d("a")},
		{name: "a token", llp: "$ORIGIN:" + d("a")},
		{name: "glibc-hwcaps, every level", llp: d("hwall")},
		{name: "glibc-hwcaps, lowest level only", llp: d("hwsome")},
		{name: "glibc-hwcaps and tls", llp: d("hwlegacy")},
		{name: "not found", llp: d("a"), lib: "libpfnothere.so.1"},
		{name: "absolute path", llp: d("b"), lib: d("a") + "/libpfa.so.1"},
		{name: "absolute path of a 32-bit library", lib: d("w32") + "/libpfa.so.1"},
	}
	for _, n := range legacy {
		tests = append(tests,
			struct{ name, llp, lib string }{name: "legacy " + n, llp: d("legacy-" + n)},
			struct{ name, llp, lib string }{name: "legacy tls/" + n, llp: d("legacy-tls-" + n)})
	}
	// One loader per case; cases could share a process, but then LD_LIBRARY_PATH would too.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := tc.lib
			if lib == "" {
				lib = "libpfa.so.1"
			}
			line := runProbe(t, "", cwd, tc.llp, lib)[0]
			agree(t, &Loader{Getenv: env(map[string]string{"LD_LIBRARY_PATH": tc.llp})}, lib, line)
		})
	}
}

// TestResolve_MatchesDlopenSystemLibs compares the model with the real loader on this machine's
// own libraries, found through the real /etc/ld.so.cache.
func TestResolve_MatchesDlopenSystemLibs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs gcc and the real loader")
	}
	names := []string{"libc.so.6", "libm.so.6", "libz.so.1", "libstdc++.so.6", "libgcc_s.so.1", "libdl.so.2", "libpthread.so.0", "libcuda.so.1", "libcudart.so.13", "libpfnothere.so.1"}
	lines := runProbe(t, "", t.TempDir(), "", names...)
	found := 0
	for i, name := range names {
		agree(t, &Loader{Getenv: env(nil)}, name, lines[i])
		if strings.HasPrefix(lines[i], "OK ") {
			found++
		}
	}
	if found == 0 || !strings.HasPrefix(lines[0], "OK ") {
		t.Errorf("the loader found none of the system libraries, libc.so.6 included: %q", lines)
	}
}

// TestResolve_MatchesDlopenInChroot runs the real loader in a chroot whose ld.so.cache the test
// wrote with ldconfig, and compares it with the model reading the same tree through Root: the
// cache in all three formats, glibc-hwcaps entries, a cache entry whose file is missing, a
// 32-bit entry, and caches the loader must ignore.
func TestResolve_MatchesDlopenInChroot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs gcc, ldconfig, chroot and the real loader")
	}
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	tg, err := findTarget(elf.EM_NONE, elf.ELFCLASSNONE)
	if err != nil {
		t.Skip(err)
	}
	root := t.TempDir()
	// The loader, the probe, and the libraries the probe needs, found by the model itself.
	install := func(inside, from string) {
		t.Helper()
		copyFile(t, from, filepath.Join(root, inside))
	}
	interp, err := filepath.EvalSymlinks(tg.interp)
	if err != nil {
		t.Skipf("no glibc loader: %v", err)
	}
	install(tg.interp, interp)
	install("/probe", probe(t))
	ef, err := elf.Open(probe(t))
	if err != nil {
		t.Fatal(err)
	}
	needed, err := ef.ImportedLibraries()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range needed {
		res, err := (&Loader{Getenv: env(nil)}).Resolve(n)
		if err != nil {
			t.Fatalf("the probe needs %s: %v", n, err)
		}
		install(res.Path, res.RealPath)
	}
	if out, err := exec.Command(needTool(t, "chroot"), root, "/probe").CombinedOutput(); err != nil {
		t.Skipf("cannot run a program in a chroot here: %v\n%s", err, out)
	}

	files := map[string]string{
		"opt/b/libpfa.so.1":       "lib:libpfa.so.1",
		"opt/a/libpfa.so.1":       "lib:libpfa.so.1",
		"opt/a/libpfa.so.10":      "lib:libpfa.so.10",
		"opt/a/libpfa.so.9":       "lib:libpfa.so.9",
		"opt/x/libpfbar.so.2.1":   "lib:libpfbar.so.2", // ldconfig -X: the cache names /opt/x/libpfbar.so.2, which is missing
		"opt/c/libpfqux.so.3":     "lib32:libpfqux.so.3",
		"opt/s/libpfswap.so.1":    "lib:libpfswap.so.1",
		"opt/s/libpfdangle.so.1":  "lib:libpfdangle.so.1",
		"opt/s/libpflinked.so.1":  "-> /opt/x/libpfbar.so.2.1",
		"opt/s/libpfnotelf.so.1":  "lib:libpfnotelf.so.1",
		"opt/hw/libpfhw.so.1":     "lib:libpfhw.so.1",
		"opt/hw/libpfhwonly.so.1": "lib:libpfhwonly.so.1",
	}
	named, _ := hostSubdirNames()
	for _, n := range named {
		files["opt/b/glibc-hwcaps/"+n+"/libpfa.so.1"] = "lib:libpfa.so.1"
	}
	if len(named) > 0 {
		files["opt/hw/glibc-hwcaps/"+named[0]+"/libpfhw.so.1"] = "lib:libpfhw.so.1"
	}
	tree(t, root, files)
	names := []string{"libpfa.so.1", "libpfa.so.10", "libpfa.so.9", "libpfa.so.09", "libpfbar.so.2", "libpfqux.so.3", "libpfswap.so.1",
		"libpfdangle.so.1", "libpflinked.so.1", "libpfnotelf.so.1", "libpfhw.so.1", "libpfdef.so.1", "libc.so.6", "libpfnothere.so.1"}
	ma := "usr/lib/" + tg.triplet
	defaults := map[string]string{
		ma + "/libpfdef.so.1":    "lib:libpfdef.so.1",
		ma + "/libpfswap.so.1":   "lib:libpfswap.so.1",
		ma + "/libpfqux.so.3":    "lib:libpfqux.so.3",
		ma + "/libpfbar.so.2":    "lib:libpfbar.so.2",
		ma + "/libpfnotelf.so.1": "lib:libpfnotelf.so.1",
	}
	// Damage a cache the way the loader tolerates: entries it passes over, or a lost
	// glibc-hwcaps section.
	patchSlot := func(t *testing.T, data []byte, path string, field int) []byte {
		t.Helper()
		for i, s := range readCache(data).slots {
			if s.Path == path {
				binary.LittleEndian.PutUint32(data[newHeaderSize+i*newEntrySize+field:], 0x7fffffff)
				return data
			}
		}
		t.Fatalf("no cache entry for %s", path)
		return nil
	}
	for _, format := range []string{"new", "compat", "old", "garbage", "truncated", "none", "tail-cut", "bad-value", "bad-key"} {
		t.Run(format, func(t *testing.T) {
			cache := filepath.Join(root, "etc", "ld.so.cache")
			switch format {
			case "garbage", "truncated":
				good := ldconfig(t, root, "new", "/opt/b", "/opt/a", "/opt/x", "/opt/c", "/opt/s", "/opt/hw")
				bad := []byte("glibc-ld.so.cache1.1 but then nothing sensible" + strings.Repeat("\xff", 64))
				if format == "truncated" {
					bad = good[:len(good)/2]
				}
				if err := os.WriteFile(cache, bad, 0o644); err != nil {
					t.Fatal(err)
				}
			case "none":
				os.Remove(cache)
			case "tail-cut", "bad-value", "bad-key":
				data := ldconfig(t, root, "new", "/opt/b", "/opt/a", "/opt/x", "/opt/c", "/opt/s", "/opt/hw")
				switch format {
				case "tail-cut":
					data = data[:len(data)-8]
				case "bad-value":
					data = patchSlot(t, data, "/opt/b/libpfa.so.1", 8)
				case "bad-key":
					data = patchSlot(t, data, "/opt/a/libpfa.so.10", 4)
				}
				if err := os.WriteFile(cache, data, 0o644); err != nil {
					t.Fatal(err)
				}
			default:
				ldconfig(t, root, format, "/opt/b", "/opt/a", "/opt/x", "/opt/c", "/opt/s", "/opt/hw")
			}
			// After the cache: what only the default directories have, and cache entries made
			// stale (a 32-bit file, a dangling one, a file that is no longer ELF).
			tree(t, root, defaults)
			for name, v := range map[string]string{"opt/s/libpfswap.so.1": "lib32:libpfswap.so.1", "opt/s/libpfnotelf.so.1": "not ELF any more" + strings.Repeat(" ", 64)} {
				os.Remove(filepath.Join(root, name))
				tree(t, root, map[string]string{name: v})
			}
			os.Remove(filepath.Join(root, "opt/s/libpfdangle.so.1"))
			t.Cleanup(func() {
				for name := range defaults {
					os.Remove(filepath.Join(root, name))
				}
				for name, v := range map[string]string{"opt/s/libpfswap.so.1": "lib:libpfswap.so.1", "opt/s/libpfnotelf.so.1": "lib:libpfnotelf.so.1", "opt/s/libpfdangle.so.1": "lib:libpfdangle.so.1"} {
					os.Remove(filepath.Join(root, name))
					tree(t, root, map[string]string{name: v})
				}
			})

			lines := runProbe(t, root, "/", "", names...)
			l := &Loader{Root: root, Getenv: env(nil)}
			for i, name := range names {
				agree(t, l, name, lines[i])
			}
		})
	}
}

// Test_interpreterMatchesHelp compares what the model reads from this machine's loader with what
// the loader says of itself in `ld.so --help`.
func Test_interpreterMatchesHelp(t *testing.T) {
	tg, err := findTarget(elf.EM_NONE, elf.ELFCLASSNONE)
	if err != nil {
		t.Skip(err)
	}
	out, err := exec.Command(tg.interp, "--help").Output()
	if err != nil || !bytes.Contains(out, []byte("Shared library search path:")) {
		t.Skipf("%s --help: %v", tg.interp, err)
	}
	var dirs, named []string
	section := ""
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "  ") {
			section = line
			continue
		}
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(section, "Shared library search path") && strings.HasSuffix(line, "(system search path)"):
			dirs = append(dirs, f[0])
		case strings.HasPrefix(section, "Subdirectories of glibc-hwcaps") && strings.Contains(line, "searched"):
			named = append(named, "glibc-hwcaps/"+f[0])
		}
	}
	data, err := os.ReadFile(tg.interp)
	if err != nil {
		t.Fatal(err)
	}
	facts := readInterpreter(data)
	if strings.Join(facts.systemDirs, ":") != strings.Join(dirs, ":") {
		t.Errorf("system dirs read from %s = %q; ld.so --help says %q", tg.interp, facts.systemDirs, dirs)
	}
	var gotNamed []string
	for _, s := range detectHWCapsSubdirs(tg.Machine, facts.version) {
		if strings.HasPrefix(s, "glibc-hwcaps/") {
			gotNamed = append(gotNamed, s)
		}
	}
	if strings.Join(gotNamed, ":") != strings.Join(named, ":") {
		t.Errorf("glibc-hwcaps subdirectories on this CPU = %q; ld.so --help says %q", gotNamed, named)
	}
	t.Logf("glibc %v; default dirs %q; hwcaps subdirs %q", facts.version, facts.systemDirs, detectHWCapsSubdirs(tg.Machine, facts.version))
}
