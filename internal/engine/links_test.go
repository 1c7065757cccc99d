//go:build linux

package engine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestFind_throughLinks: installs made of links that lead out of the directory a variable names (a
// uv venv, a Nix root, a Spack view) are found as cuda.pathfinder finds them: the path inside the
// directory, its label, the file the links lead to in RealPath, every link in the trace; a link to
// a stub is refused naming both. The result cache remembers every link: re-pointing one, or
// replacing what it leads to, changes the answer.
func TestFind_throughLinks(t *testing.T) {
	store, root, cache := t.TempDir(), t.TempDir(), t.TempDir()
	v1 := filetree.Put(t, store, "pkg-1/lib/libcudart.so.12.4.127", elfLib(t, "libcudart.so.12"))
	v2 := filetree.Put(t, store, "pkg-2/lib/libcudart.so.12.4.131", elfLib(t, "libcudart.so.12"))
	link := filepath.Join(root, "lib64", "libcudart.so.12")
	filetree.Symlink(t, v1, link)
	env := testEnv{"CUDA_HOME": root, "PATHFINDER_CACHE_DIR": cache}
	config := "" // the defaults: a config file of an Engine's own would key its cache entries apart

	f := newFinder(t, env, config)
	ex := f.Explain(bg, DynamicLib, "cudart")
	if ex.Err != nil || ex.Result.Path != link || ex.Result.RealPath != v1 || ex.Result.FoundVia != "CUDA_HOME" {
		t.Fatalf("explain: %v, %+v; want %s (real %s) via CUDA_HOME", ex.Err, ex.Result, link, v1)
	}
	if c := ex.Steps[len(ex.Steps)-1].Candidates; len(c) != 1 || len(c[0].Links) != 1 || c[0].Links[0] != (search.Link{Path: link, Target: v1}) {
		t.Fatalf("the trace's links: %+v", c)
	}
	if _, err, _ := findFresh(t, env, config, "cudart"); err != nil { // the answer cached
		t.Fatal(err)
	}
	for i, step := range []struct {
		name   string
		change func()
		want   string
	}{
		{"unchanged", func() {}, v1},
		{"the link re-pointed", func() { os.Remove(link); filetree.Symlink(t, v2, link) }, v2},
		{"what it leads to replaced", func() { filetree.Put(t, store, "pkg-2/lib/libcudart.so.12.4.131", elfLib(t, "libcudnn.so.9")) }, ""},
	} {
		step.change()
		lib, err, hit := findFresh(t, env, config, "cudart")
		switch {
		case step.want == "" && (err == nil || hit):
			t.Fatalf("%d %s: %+v, %v (cached %v); want refused afresh", i, step.name, lib, err, hit)
		case step.want != "" && (err != nil || lib.RealPath != step.want || hit != (step.name == "unchanged")):
			t.Fatalf("%d %s: %+v, %v (cached %v); want %s", i, step.name, lib, err, hit, step.want)
		}
	}

	// A soname link to the toolkit's stub is a stub.
	stubRoot := t.TempDir()
	stub := filetree.Put(t, stubRoot, "lib64/stubs/libcudart.so", elfLib(t, "libcudart.so.12"))
	filetree.Symlink(t, "stubs/libcudart.so", filepath.Join(stubRoot, "lib64", "libcudart.so.12"))
	_, err := newFinder(t, testEnv{"CUDA_HOME": stubRoot}, config).Find(bg, "cudart")
	want := filepath.Join(stubRoot, "lib64", "libcudart.so.12") + " → stubs/libcudart.so (" + stub + "): a stubs/ library"
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a link to a stub: %v; want refused, %q", err, want)
	}
}

// TestLoad_changedWhileLoading: the same user swaps the file between the last check and the loader's
// open. The load is an error that says so, never a success naming the checked path, and the other
// library is not kept.
func TestLoad_changedWhileLoading(t *testing.T) {
	needLoader(t)
	site, marks := t.TempDir(), t.TempDir()
	lib := filetree.Put(t, site, "pf/lib/libswapd.so.1", ctorLib(t, "libswapd.so.1", filepath.Join(marks, "checked"), "swapd_checked"))
	other := ctorLib(t, "libswapd.so.1", filepath.Join(marks, "other"), "swapd_other")
	packs := filetree.Put(t, t.TempDir(), "swapd.toml", pack("swapd", `site_packages_linux = ["pf/lib"]`))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs}, "[search]\norder = [\"wheels\"]\n", func(o *Options) {
		o.hooks.beforeDlopen = func(p string) {
			if p == lib {
				tmp := p + ".new"
				os.WriteFile(tmp, other, 0o755)
				os.Rename(tmp, p)
			}
		}
	})
	got, err := f.Load(bg, "swapd")
	if err == nil || !strings.Contains(err.Error(), "changed while it was being loaded") {
		t.Fatalf("Load = %+v, %v; want an error: changed while it was being loaded", got, err)
	}
	if _, err := os.Stat(filepath.Join(marks, "other")); err != nil {
		t.Fatal("the swapped-in library was not loaded: the test did not swap in time")
	}
	if l, ok := loader.Loaded("libswapd.so.1"); ok {
		t.Fatalf("the library that was not checked stays in the process: %+v", l)
	}
}

// TestLoad_linkRepointedByAnotherUser: in a directory anyone may write, another user (nobody)
// re-points a granted link between a good library and an evil one (another library by its
// DT_SONAME, so a check that sees it refuses it) at each moment of a load (loadFlipped): the evil
// constructor never runs, and every load that succeeds ran the good one.
func TestLoad_linkRepointedByAnotherUser(t *testing.T) {
	needLoader(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the other user with setpriv")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		os.Chmod(d, 0o755) // the other user walks in
	}
	dir, outside, marks := filepath.Join(base, "pf", "lib"), filepath.Join(base, "outside"), filepath.Join(base, "marks")
	for _, d := range []string{dir, outside, marks} {
		os.MkdirAll(d, 0o755)
	}
	os.Chmod(dir, 0o777)
	os.Chmod(marks, 0o777)
	var pk strings.Builder
	good := ctorLib(t, "librept0000.so.1", filepath.Join(marks, "good-0000"), "rept_good")
	evil := ctorLib(t, "librepo0000.so.1", filepath.Join(marks, "evil-0000"), "rept_evil")
	for i := range flipPlans {
		tag := fmt.Sprintf("%04d", i)
		pk.Write(pack("rept"+tag, `site_packages_linux = ["pf/lib"]`))
		pk.WriteString("\n")
		filetree.Put(t, outside, "good/librept"+tag+".so.1", []byte(strings.ReplaceAll(string(good), "0000", tag)))
		filetree.Put(t, outside, "evil/librept"+tag+".so.1", []byte(strings.ReplaceAll(string(evil), "0000", tag)))
	}
	packs := filetree.Put(t, t.TempDir(), "rept.toml", []byte(pk.String()))
	loadFlipped(t, testEnv{"PATHFINDER_SITE_PACKAGES": base, "PATHFINDER_PACKS": packs}, "[search]\norder = [\"wheels\"]\n", "rept", marks, func(i int, evil bool) {
		l, to := fmt.Sprintf("librept%04d.so.1", i), "good"
		if evil {
			to = "evil"
		}
		repoint := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c",
			`cd "$1" && ln -sfn "$2/$3/$4" ".$4" && mv -T ".$4" "$4"`, "repoint", dir, outside, to, l)
		if out, err := repoint.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", repoint, err, out)
		}
	})
}

// TestFind_systemStubThroughLink: a directory on LD_LIBRARY_PATH whose soname link leads to a
// toolkit's stub (a container build's shortcut): the loader model passes over it, naming both
// paths, to the real library its search reaches next.
func TestFind_systemStubThroughLink(t *testing.T) {
	toolkit, linkDir, driver := t.TempDir(), t.TempDir(), t.TempDir()
	stub := filetree.Put(t, toolkit, "lib64/stubs/libcuda.so", elfLib(t, "libcuda.so.1"))
	filetree.Symlink(t, stub, filepath.Join(linkDir, "libcuda.so.1"))
	real := filetree.Put(t, driver, "libcuda.so.1", elfLib(t, "libcuda.so.1"))
	f := newFinder(t, testEnv{"LD_LIBRARY_PATH": linkDir + ":" + driver}, "")
	ex := f.Explain(bg, DynamicLib, "cuda")
	if ex.Err != nil || ex.Result.Path != real {
		t.Fatalf("explain cuda: %v, %+v; want %s", ex.Err, ex.Result, real)
	}
	want := "the system loader found a stub at " + filepath.Join(linkDir, "libcuda.so.1") + " → " + stub
	if c := ex.Steps[len(ex.Steps)-1].Candidates; len(c) == 0 || !strings.HasPrefix(c[0].Refused, want) {
		t.Fatalf("the trace: %+v; want the stub passed over: %q", ex.Steps, want)
	}
}

// TestLoad_linkToWritableDirectory: a link in a private directory whose target lies in a directory
// anyone may write is loaded through the checked file's descriptor, as a file in that directory is:
// the trust rule is judged on every link and every directory on the way to the target.
func TestLoad_linkToWritableDirectory(t *testing.T) {
	needLoader(t)
	site, shared := t.TempDir(), t.TempDir()
	os.Chmod(shared, 0o777)
	target := filetree.Put(t, shared, "libtrustl.so.1", elfLib(t, "libtrustl.so.1"))
	link := filepath.Join(site, "pf", "lib", "libtrustl.so.1")
	filetree.Symlink(t, target, link)
	packs := filetree.Put(t, t.TempDir(), "trustl.toml", pack("trustl", `site_packages_linux = ["pf/lib"]`))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs}, "")
	ex := f.Explain(bg, DynamicLib, "trustl")
	want := "a load goes through the checked file's descriptor, as directory " + shared + " is writable by others"
	if ex.Err != nil || !strings.Contains(fmt.Sprint(ex.Steps), want) {
		t.Fatalf("explain: %v %+v; want the note %q", ex.Err, ex.Steps, want)
	}
	lib, err := f.Load(bg, "trustl")
	if err != nil || lib.Path != link || lib.RealPath != target {
		t.Fatalf("Load = %+v, %v; want %s (real %s)", lib, err, link, target)
	}
}

// TestRealPath_linkFlippedByAnotherUser: another user owns a granted directory and keeps flipping
// its lib between a directory and a link to another directory, each holding a valid library of the
// name searched for. Every load that succeeds reports the file whose constructor ran (real_path,
// or path where no link was on the way), and every find the file it checked: the libraries behind
// the link need a library that is nowhere, which only a check of them can tell (load_problem). A
// find answered from the result cache once the flipping stops is as true.
func TestRealPath_linkFlippedByAnotherUser(t *testing.T) {
	needLoader(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the other user with setpriv")
	}
	for _, tool := range []string{"setpriv", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
	n := 150
	if testing.Short() {
		n = 40
	}
	first := int(flipRuns.Add(int64(n))) - n // names new to the process at each run (-count)
	base := t.TempDir()
	os.Chmod(filepath.Dir(base), 0o755) // the other user walks in
	site, marks := filepath.Join(base, "site"), filepath.Join(base, "marks")
	os.MkdirAll(marks, 0o777)
	os.Chmod(marks, 0o777)
	missing := filepath.Join(t.TempDir(), "libflipgone.so")
	os.WriteFile(missing, elfLib(t, "libflipgone.so.1"), 0o755) // linked against, then nowhere
	var pk strings.Builder
	for _, side := range []string{"a", "b"} {
		ctor := ctorLib(t, "libflipl0000.so.1", filepath.Join(marks, side+"-0000"), "flip_"+side)
		checked := elfLib(t, "libflipf0000.so.1")
		if side == "b" {
			checked = elfLib(t, "libflipf0000.so.1", "-Wl,--no-as-needed", missing)
		}
		for i := first; i < first+n; i++ {
			tag := fmt.Sprintf("%04d", i)
			filetree.Put(t, site, "pf/"+side+"/libflipl"+tag+".so.1", bytes.ReplaceAll(ctor, []byte("0000"), []byte(tag)))
			filetree.Put(t, site, "pf/"+side+"/libflipf"+tag+".so.1", bytes.ReplaceAll(checked, []byte("0000"), []byte(tag)))
			if side == "a" {
				for _, kind := range []string{"l", "f"} {
					pk.Write(pack("flip"+kind+tag, `site_packages_linux = ["pf/lib"]`))
					pk.WriteString("\n")
				}
			}
		}
	}
	filepath.Walk(site, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
	packs := filetree.Put(t, t.TempDir(), "flip.toml", []byte(pk.String()))
	// lib is the directory a, then a link to b, and again, as fast as the kernel exchanges them.
	filetree.Symlink(t, "b", filepath.Join(site, "pf/lib"))
	os.Lchown(filepath.Join(site, "pf/lib"), 65534, 65534)
	flipper := flipperProgram(t)
	flip := exec.Command("unshare", "-m", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", flipper, filepath.Join(site, "pf"))
	if err := flip.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { flip.Process.Kill(); flip.Wait() }
	defer stop()

	cache := t.TempDir()
	env := testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs, "PATHFINDER_CACHE_DIR": cache}
	config := "[search]\norder = [\"wheels\"]\n"
	viaLink := func(tag string, lib *search.Library) bool {
		return lib.RealPath == filepath.Join(site, "pf/b/libflip"+tag+".so.1")
	}
	wrong, counts := []string{}, map[string]int{}
	f := newFinder(t, env, config)
	for i := first; i < first+n; i++ {
		tag := fmt.Sprintf("%04d", i)
		if lib, err := f.Load(bg, "flipl"+tag); err == nil {
			side := "a"
			if viaLink("l"+tag, &lib.Library) {
				side = "b"
			} else if lib.RealPath != "" {
				side = "?"
			}
			counts["load "+side]++
			if _, err := os.Stat(filepath.Join(marks, side+"-"+tag)); err != nil {
				wrong = append(wrong, fmt.Sprintf("load %s reported %s (real %q), but %s's constructor did not run", tag, lib.Path, lib.RealPath, side))
			}
		}
		if lib, err := f.Find(bg, "flipf"+tag); err == nil {
			counts[fmt.Sprintf("find via link %v", viaLink("f"+tag, lib))]++
			if viaLink("f"+tag, lib) != (lib.LoadProblem != "") {
				wrong = append(wrong, fmt.Sprintf("find %s reported %s (real %q) with load problem %q", tag, lib.Path, lib.RealPath, lib.LoadProblem))
			}
		}
	}
	stop()
	// The flipping over, lib stays the directory a, and whatever the cache holds must say so.
	if fi, err := os.Lstat(filepath.Join(site, "pf/lib")); err == nil && !fi.IsDir() {
		os.Remove(filepath.Join(site, "pf/lib"))
		os.Rename(filepath.Join(site, "pf/a"), filepath.Join(site, "pf/lib"))
	}
	g := newFinder(t, env, config)
	for i := first; i < first+n; i++ {
		tag := fmt.Sprintf("%04d", i)
		if lib, err := g.Find(bg, "flipf"+tag); err != nil || lib.RealPath != "" || lib.LoadProblem != "" {
			wrong = append(wrong, fmt.Sprintf("find %s once lib stays the directory: %+v, %v", tag, lib, err))
		}
	}
	t.Logf("%d names each loaded and found while another user flipped the link: %v", n, counts)
	if len(wrong) > 0 {
		t.Fatalf("%d reports name a file other than the one loaded or checked:\n%s", len(wrong), strings.Join(wrong, "\n"))
	}
	if counts["load a"] == 0 || counts["load b"] == 0 {
		t.Fatalf("the loads did not meet both sides of the flip (%v): the test proves nothing", counts)
	}
}

// flipRuns counts the names TestRealPath_linkFlippedByAnotherUser used in this process.
var flipRuns atomic.Int64

// flipperProgram is a program that exchanges DIR/lib and DIR/a (renameat2's RENAME_EXCHANGE) until
// it is killed: the name lib is never missing, and flips in microseconds, as a determined other
// user's would.
func flipperProgram(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	src, bin := filepath.Join(dir, "flip.c"), filepath.Join(dir, "flip")
	os.WriteFile(src, []byte(`#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
	if (argc != 2 || chdir(argv[1]) != 0) return 2;
	for (;;) renameat2(AT_FDCWD, "lib", AT_FDCWD, "a", RENAME_EXCHANGE);
}
`), 0o644)
	if b, err := exec.Command("gcc", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return bin
}
