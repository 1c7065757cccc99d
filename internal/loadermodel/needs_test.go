package loadermodel

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// gccVersioned builds a shared object from C source src with a GNU version script (none when
// script is ""), linked against the given libraries, with extra linker flags.
func gccVersioned(t *testing.T, dir, soname, src, script string, args ...string) string {
	t.Helper()
	out := filepath.Join(dir, soname)
	if script != "" {
		v := filepath.Join(dir, soname+".map")
		if err := os.WriteFile(v, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append([]string{"-Wl,--version-script," + v}, args...)
	}
	elfso.Build(t, out, soname, src, args...)
	return out
}

func needsOf(t *testing.T, p string) binfmt.Needs {
	t.Helper()
	f, n := openNeeds(t, p)
	f.Close()
	return n
}

// TestLoadProblem_agreesWithDlopen: for each object, the model predicts a failure exactly when the
// real loader (a child process that dlopens it) fails, and names what the loader names.
func TestLoadProblem_agreesWithDlopen(t *testing.T) {
	build := t.TempDir()
	// libdep.so.1 as the program was built against it (f at DEP_1, g at DEP_2), and an older one
	// with only DEP_1: a library built against the newer fails to load beside the older.
	newDep := gccVersioned(t, filetree.Mkdir(t, build, "new", 0o755), "libdep.so.1",
		"int f(void){return 1;} int g(void){return 2;}", "DEP_1 { global: f; local: *; };\nDEP_2 { global: g; } DEP_1;\n")
	oldDep := gccVersioned(t, filetree.Mkdir(t, build, "old", 0o755), "libdep.so.1", "int f(void){return 1;}", "DEP_1 { global: f; local: *; };\n")
	user := func(dir string, extra ...string) string {
		return gccVersioned(t, dir, "libuser.so.1", "int g(void); int h(void){return g();}", "",
			append([]string{"-L" + filepath.Dir(newDep), "-l:libdep.so.1"}, extra...)...)
	}

	cases := []struct {
		name    string
		layout  func(dir string) string // returns the object to load
		llp     func(dir string) string
		problem string // a substring of the predicted problem, "" for none
	}{
		{"needed beside it through $ORIGIN", func(dir string) string {
			copyFile(t, newDep, filepath.Join(dir, "libdep.so.1"))
			return user(dir, "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags")
		}, nil, ""},
		{"needed beside it through an old-style DT_RPATH", func(dir string) string {
			copyFile(t, newDep, filepath.Join(dir, "libdep.so.1"))
			return user(dir, "-Wl,-rpath,$ORIGIN", "-Wl,--disable-new-dtags")
		}, nil, ""},
		{"needed nowhere", func(dir string) string {
			return user(dir)
		}, nil, "it needs libdep.so.1, which the loader would not find"},
		{"needed on LD_LIBRARY_PATH", func(dir string) string {
			return user(dir)
		}, func(string) string { return filepath.Dir(newDep) }, ""},
		{"needed version missing", func(dir string) string {
			copyFile(t, oldDep, filepath.Join(dir, "libdep.so.1"))
			return user(dir, "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags")
		}, nil, "libdep.so.1: version DEP_2 not found (required by libuser.so.1)"},
		{"LD_LIBRARY_PATH wins over DT_RUNPATH", func(dir string) string {
			copyFile(t, newDep, filepath.Join(dir, "libdep.so.1"))
			return user(dir, "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags")
		}, func(string) string { return filepath.Dir(oldDep) }, "version DEP_2 not found"},
		{"DT_RPATH wins over LD_LIBRARY_PATH", func(dir string) string {
			copyFile(t, newDep, filepath.Join(dir, "libdep.so.1"))
			return user(dir, "-Wl,-rpath,$ORIGIN", "-Wl,--disable-new-dtags")
		}, func(string) string { return filepath.Dir(oldDep) }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			obj := c.layout(dir)
			llp := ""
			if c.llp != nil {
				llp = c.llp(dir)
			}
			l := &Loader{Getenv: env(map[string]string{"LD_LIBRARY_PATH": llp})}
			got := l.LoadProblem(obj, needsOf(t, obj), nil, nil)
			line := runProbe(t, "", dir, llp, obj)[0]
			switch {
			case c.problem == "" && got != "":
				t.Fatalf("predicted %q; the loader says %s", got, line)
			case c.problem != "" && !strings.Contains(got, c.problem):
				t.Fatalf("predicted %q, want it to say %q; the loader says %s", got, c.problem, line)
			case (got == "") != strings.HasPrefix(line, "OK "):
				t.Fatalf("the model predicts %q but the loader says %s", got, line)
			}
		})
	}
}

// TestLoadProblem_provided: a needed library that will be loaded first (a catalog dependency) is
// matched by soname and needs no search.
func TestLoadProblem_provided(t *testing.T) {
	dir := t.TempDir()
	dep := gccVersioned(t, filetree.Mkdir(t, dir, "dep", 0o755), "libdep.so.1", "int g(void){return 2;}", "")
	user := gccVersioned(t, dir, "libuser.so.1", "int g(void); int h(void){return g();}", "", "-L"+filepath.Dir(dep), "-l:libdep.so.1")
	l := &Loader{Getenv: env(nil)}
	if p := l.LoadProblem(user, needsOf(t, user), nil, nil); !strings.Contains(p, "libdep.so.1") {
		t.Fatalf("without the dependency: %q", p)
	}
	if p := l.LoadProblem(user, needsOf(t, user), func(n string) bool { return n == "libdep.so.1" }, nil); p != "" {
		t.Fatalf("with the dependency provided: %q", p)
	}
}

// TestLoadProblem_realNCCL: Debian's libnccl 2.22 needs GLIBC_2.38; on an older glibc the model
// says so in the loader's words, as dlopen does.
func TestLoadProblem_realNCCL(t *testing.T) {
	nccl := realnv.Get(t, "trixie/libnccl2").Path("usr/lib/x86_64-linux-gnu/libnccl.so.2")
	l := &Loader{Getenv: env(nil)}
	n := needsOf(t, nccl)
	got := l.LoadProblem(nccl, n, nil, nil)
	line := runProbe(t, "", t.TempDir(), "", nccl)[0]
	if strings.HasPrefix(line, "OK ") {
		if got != "" {
			t.Fatalf("the loader loads it, the model predicts %q", got)
		}
		t.Skip("this glibc is new enough for libnccl 2.22")
	}
	if !strings.Contains(got, "version GLIBC_2.38 not found (required by libnccl.so.2); this system has up to GLIBC_2.") || !strings.Contains(line, "GLIBC_2.38") {
		t.Fatalf("model: %q\nloader: %s", got, line)
	}
}

// TestNeeds_PIE: an executable built as PIE says so; a shared library does not.
func TestNeeds_PIE(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.c")
	os.WriteFile(src, []byte("int main(void){return 0;}"), 0o644)
	exe := filepath.Join(dir, "pie")
	if msg, err := exec.Command(needTool(t, "gcc"), "-fPIE", "-pie", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	if n := needsOf(t, exe); !n.PIE {
		t.Fatal("a PIE executable is not reported as PIE")
	}
	lib := gccVersioned(t, dir, "libx.so.1", "int x(void){return 1;}", "")
	if n := needsOf(t, lib); n.PIE || n.Soname != "libx.so.1" {
		t.Fatalf("a shared library: %+v", n)
	}
}

// TestDefinedVersions: the hand-read version definitions (binfmt's) are debug/elf's, on this
// system's libc and libstdc++ and on a library with a version script.
func TestDefinedVersions(t *testing.T) {
	files := []string{gccVersioned(t, t.TempDir(), "libv.so.1", "int f(void){return 1;} int g(void){return 2;}", "V_1 { global: f; local: *; };\nV_2 { global: g; } V_1;\n")}
	l := &Loader{Getenv: env(nil)}
	for _, so := range []string{"libc.so.6", "libstdc++.so.6", "libm.so.6"} {
		if res, err := l.Resolve(so); err == nil {
			files = append(files, res.Path)
		}
	}
	for _, p := range files {
		f, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defs, err := f.DynamicVersions()
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, d := range defs {
			want = append(want, d.Name)
		}
		ef, err := binfmt.OpenELF(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := ef.DefinedVersions(); strings.Join(got, " ") != strings.Join(want, " ") || len(got) < 2 {
			t.Fatalf("%s: DefinedVersions = %v; debug/elf says %v", p, got, want)
		}
		ef.Close()
		f.Close()
	}
}
