//go:build linux

package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/loader"
)

// TestFind_throughLinks: installs made of links that lead out of the directory a variable names (a
// uv venv, a Nix root, a Spack view) are found as cuda.pathfinder finds them: the path inside the
// directory, its label, the file the links lead to in RealPath, every link in the trace; a link to
// a stub is refused naming both. The result cache remembers every link: re-pointing one, or
// replacing what it leads to, changes the answer.
func TestFind_throughLinks(t *testing.T) {
	store, root, cache := t.TempDir(), t.TempDir(), t.TempDir()
	v1 := put(t, store, "pkg-1/lib/libcudart.so.12.4.127", elfLib(t, "libcudart.so.12"))
	v2 := put(t, store, "pkg-2/lib/libcudart.so.12.4.131", elfLib(t, "libcudart.so.12"))
	link := filepath.Join(root, "lib64", "libcudart.so.12")
	symlink(t, v1, link)
	env := testEnv{"CUDA_HOME": root, "PATHFINDER_CACHE_DIR": cache}
	config := "" // the defaults: a config file of a Finder's own would key its cache entries apart

	f := newFinder(t, env, config)
	ex := f.Explain(bg, DynamicLib, "cudart")
	if ex.Err != nil || ex.Result.Path != link || ex.Result.RealPath != v1 || ex.Result.FoundVia != "CUDA_HOME" {
		t.Fatalf("explain: %v, %+v; want %s (real %s) via CUDA_HOME", ex.Err, ex.Result, link, v1)
	}
	if c := ex.Steps[len(ex.Steps)-1].Candidates; len(c) != 1 || len(c[0].Links) != 1 || c[0].Links[0] != (Link{Path: link, Target: v1}) {
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
		{"the link re-pointed", func() { os.Remove(link); symlink(t, v2, link) }, v2},
		{"what it leads to replaced", func() { put(t, store, "pkg-2/lib/libcudart.so.12.4.131", elfLib(t, "libcudnn.so.9")) }, ""},
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
	stub := put(t, stubRoot, "lib64/stubs/libcudart.so", elfLib(t, "libcudart.so.12"))
	symlink(t, "stubs/libcudart.so", filepath.Join(stubRoot, "lib64", "libcudart.so.12"))
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
	lib := put(t, site, "pf/lib/libswapd.so.1", ctorLib(t, "libswapd.so.1", filepath.Join(marks, "checked"), "swapd_checked"))
	other := ctorLib(t, "libswapd.so.1", filepath.Join(marks, "other"), "swapd_other")
	packs := put(t, t.TempDir(), "swapd.toml", pack("swapd", `site_packages_linux = ["pf/lib"]`))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs}, "[search]\norder = [\"wheels\"]\n")
	f.hooks.beforeDlopen = func(p string) {
		if p == lib {
			tmp := p + ".new"
			os.WriteFile(tmp, other, 0o755)
			os.Rename(tmp, p)
		}
	}
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

// TestLoad_linkRepointedByAnotherUser: in a directory anyone may write, another user (nobody) keeps
// re-pointing a granted link between a good library and an evil one (another library by its
// DT_SONAME, so a check that sees it refuses it) while one library after another is loaded: the
// evil constructor never runs, and every load that succeeds ran the good one.
func TestLoad_linkRepointedByAnotherUser(t *testing.T) {
	needLoader(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the other user with setpriv")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	n := 200
	if testing.Short() {
		n = 50
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
	for i := range n {
		tag := fmt.Sprintf("%04d", i)
		pk.Write(pack("rept"+tag, `site_packages_linux = ["pf/lib"]`))
		pk.WriteString("\n")
		g := put(t, outside, "good/librept"+tag+".so.1", []byte(strings.ReplaceAll(string(good), "0000", tag)))
		put(t, outside, "evil/librept"+tag+".so.1", []byte(strings.ReplaceAll(string(evil), "0000", tag)))
		symlink(t, g, filepath.Join(dir, "librept"+tag+".so.1"))
	}
	packs := put(t, t.TempDir(), "rept.toml", []byte(pk.String()))
	flip := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", `
		cd "$1" && while :; do for l in librept*.so.1; do
			ln -sfn "$2/evil/$l" ".$l" && mv -T ".$l" "$l"; ln -sfn "$2/good/$l" ".$l" && mv -T ".$l" "$l"
		done; done`, "flip", dir, outside)
	flip.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its ln and mv stop with it
	if err := flip.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { syscall.Kill(-flip.Process.Pid, syscall.SIGKILL); flip.Wait() }
	defer stop()

	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": base, "PATHFINDER_PACKS": packs}, "[search]\norder = [\"wheels\"]\n")
	loaded := 0
	for i := range n {
		tag := fmt.Sprintf("%04d", i)
		if _, err := f.Load(bg, "rept"+tag); err == nil {
			loaded++
		}
	}
	stop()
	if evils, _ := filepath.Glob(filepath.Join(marks, "evil-*")); len(evils) > 0 {
		t.Fatalf("the evil constructor ran %d times in %d loads", len(evils), n)
	}
	if goods, _ := filepath.Glob(filepath.Join(marks, "good-*")); len(goods) != loaded {
		t.Fatalf("%d loads succeeded but %d good libraries ran", loaded, len(goods))
	}
	if loaded == 0 {
		t.Fatal("nothing loaded: the test proves nothing")
	}
	t.Logf("%d links re-pointed by another user while loading: %d loaded the good library, %d refused the evil one, no evil code ran", n, loaded, n-loaded)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestFind_systemStubThroughLink: a directory on LD_LIBRARY_PATH whose soname link leads to a
// toolkit's stub (a container build's shortcut): the loader model passes over it, naming both
// paths, to the real library its search reaches next.
func TestFind_systemStubThroughLink(t *testing.T) {
	toolkit, linkDir, driver := t.TempDir(), t.TempDir(), t.TempDir()
	stub := put(t, toolkit, "lib64/stubs/libcuda.so", elfLib(t, "libcuda.so.1"))
	symlink(t, stub, filepath.Join(linkDir, "libcuda.so.1"))
	real := put(t, driver, "libcuda.so.1", elfLib(t, "libcuda.so.1"))
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
	target := put(t, shared, "libtrustl.so.1", elfLib(t, "libtrustl.so.1"))
	link := filepath.Join(site, "pf", "lib", "libtrustl.so.1")
	symlink(t, target, link)
	packs := put(t, t.TempDir(), "trustl.toml", pack("trustl", `site_packages_linux = ["pf/lib"]`))
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
