package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// The tests here hold load and find to what really happens in the process: which file the loader
// maps, whether a second copy of a library appears, and what an error says happened. Each uses
// libraries of its own pack: what a process loaded stays loaded.

// mappedFiles lists the files of this process's mappings whose base name starts with prefix.
func mappedFiles(t *testing.T, prefix string) []string {
	t.Helper()
	listing, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps")
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range loader.ParseMaps(string(listing)) {
		if m.Path != "" && strings.HasPrefix(filepath.Base(m.Path), prefix) && !seen[m.Path] {
			seen[m.Path] = true
			out = append(out, m.Path)
		}
	}
	return out
}

// TestLoad_alreadyLoadedWins: a copy of a library (or of its dependency) already in the process —
// LD_PRELOADed, or loaded by another component — wins over the files the steps find, wherever
// already-loaded stands in the order and also with no already-loaded step at all: the process never
// gets a second copy. explain says what the steps found and why a load would not take it.
func TestLoad_alreadyLoadedWins(t *testing.T) {
	needLoader(t)
	site, elsewhere := t.TempDir(), t.TempDir()
	packs := filetree.Put(t, t.TempDir(), "wins.toml", []byte(string(pack("alwin", `site_packages_linux = ["pf/lib"]`, `dependencies = ["alwindep"]`))+"\n"+
		string(pack("alwindep", `site_packages_linux = ["pf/lib"]`))+"\n"+string(pack("alwinlink", `site_packages_linux = ["pf/lib"]`))))
	wheelDep := filetree.Put(t, site, "pf/lib/libalwindep.so.1", elfLib(t, "libalwindep.so.1"))
	wheelLib := filetree.Put(t, site, "pf/lib/libalwin.so.1", elfLib(t, "libalwin.so.1", "-Wl,--no-as-needed", wheelDep))
	// Another component's copy of the dependency: the same library, another file.
	otherDep := filetree.Put(t, elsewhere, "libalwindep.so.1", elfLib(t, "libalwindep.so.1"))
	if _, err := loader.Open(otherDep, false); err != nil {
		t.Fatal(err)
	}
	env := testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs}

	for _, order := range []string{`["wheels", "already-loaded", "system"]`, `["wheels", "system"]`} {
		f := newFinder(t, env, "[search]\norder = "+order+"\n")
		ex := f.Explain(bg, DynamicLib, "alwindep")
		if c := ex.Steps[0].Candidates; len(c) != 1 || c[0].Path != wheelDep || !strings.Contains(c[0].Note, "a load returns the copy already in this process, "+otherDep) {
			t.Fatalf("order %s: explain's wheels step: %+v", order, ex.Steps[0])
		}
		dep, err := f.Load(bg, "alwindep")
		if err != nil || dep.Path != otherDep || !dep.AlreadyLoaded || dep.FoundVia != "was-already-loaded-from-elsewhere" || dep.Step != StepAlreadyLoaded {
			t.Fatalf("order %s: Load(alwindep) = %+v, %v; want the copy already loaded, %s", order, dep, err, otherDep)
		}
	}
	// The library itself is new: it is loaded from the wheel, its dependency is the process's copy.
	f := newFinder(t, env, "[search]\norder = [\"wheels\", \"system\"]\n")
	lib, err := f.Load(bg, "alwin")
	if err != nil || lib.Path != wheelLib || lib.AlreadyLoaded {
		t.Fatalf("Load(alwin) = %+v, %v; want it from %s", lib, err, wheelLib)
	}
	if got := mappedFiles(t, "libalwindep.so"); len(got) != 1 || got[0] != otherDep {
		t.Fatalf("the process maps %v; want only %s", got, otherDep)
	}

	// A hard link of a loaded file is the same file to the loader: the copy in the process, said so.
	linked := filetree.Put(t, elsewhere, "libalwinlink.so.1", elfLib(t, "libalwinlink.so.1"))
	if _, err := loader.Open(linked, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(linked, filepath.Join(site, "pf/lib/libalwinlink.so.1")); err != nil {
		t.Fatal(err)
	}
	got, err := f.Load(bg, "alwinlink")
	if err != nil || got.Path != linked || !got.AlreadyLoaded {
		t.Fatalf("Load(alwinlink) = %+v, %v; want the copy already loaded, %s", got, err, linked)
	}
}

// TestLoad_checkedFileThroughDescriptor: in a directory others may write, the file validation
// checked is the file loaded, even when the name is pointed elsewhere between the check and the
// load; the outside library's code never runs, and the path reported is the one checked.
func TestLoad_checkedFileThroughDescriptor(t *testing.T) {
	needLoader(t)
	site, outside, marks := t.TempDir(), t.TempDir(), t.TempDir()
	lib := filepath.Join(site, "pf", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(lib, 0o777); err != nil { // anyone may rename in it
		t.Fatal(err)
	}
	packs := filetree.Put(t, t.TempDir(), "fd.toml", pack("viafd", `site_packages_linux = ["pf/lib"]`))
	good := filetree.Put(t, site, "pf/lib/libviafd.so.1", ctorLib(t, "libviafd.so.1", filepath.Join(marks, "good"), "viafd_good"))
	evil := filetree.Put(t, outside, "libviafd.so.1", ctorLib(t, "libviafd.so.1", filepath.Join(marks, "evil"), "viafd_evil"))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs}, "", func(o *Options) {
		o.hooks.beforeLoad = func(p string) {
			if p == good {
				os.Rename(good, good+".moved")
				os.Symlink(evil, good)
			}
		}
	})
	ex := f.Explain(bg, DynamicLib, "viafd")
	if c := ex.Steps[0].Candidates; len(c) != 1 || !strings.Contains(c[0].Note, "a load goes through the checked file's descriptor, as directory "+lib+" is writable by others") {
		t.Fatalf("explain: %+v", ex.Steps[0].Candidates)
	}
	got, err := f.Load(bg, "viafd")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if _, err := os.Stat(filepath.Join(marks, "evil")); err == nil {
		t.Fatal("the outside library's constructor ran")
	}
	if _, err := os.Stat(filepath.Join(marks, "good")); err != nil || got.Path != good {
		t.Fatalf("Load = %+v; want the checked file %s loaded (its constructor: %v)", got, good, err)
	}
}

// TestLoad_flipRace: another user flips a granted name between a library inside the root and a
// symlink to one outside, at each moment of a load (loadFlipped): the outside library's code never
// runs; a name that is the inside library when checked loads it, one that leads outside is refused.
func TestLoad_flipRace(t *testing.T) {
	needLoader(t)
	site, outside, marks := t.TempDir(), t.TempDir(), t.TempDir()
	dir := filepath.Join(site, "pf", "lib")
	os.MkdirAll(dir, 0o755)
	os.Chmod(dir, 0o777) // anyone may rename in it
	var pk strings.Builder
	for i := range flipPlans {
		pk.Write(pack(fmt.Sprintf("flip%04d", i), `site_packages_linux = ["pf/lib"]`))
		pk.WriteString("\n")
	}
	packs := filetree.Put(t, t.TempDir(), "flip.toml", []byte(pk.String()))
	// One library, its soname patched per name (same length), built once for each side. The outside
	// one is another library (its DT_SONAME says so): a check that sees it refuses it, so its code
	// runs only if a load maps what no check saw.
	good := ctorLib(t, "libflip0000.so.1", filepath.Join(marks, "good-0000"), "flip_good")
	evil := ctorLib(t, "libflop0000.so.1", filepath.Join(marks, "evil-0000"), "flip_evil")
	for i := range flipPlans {
		tag := fmt.Sprintf("%04d", i)
		os.WriteFile(filepath.Join(dir, ".libflip"+tag+".so.1"), bytes.ReplaceAll(good, []byte("0000"), []byte(tag)), 0o755)
		os.WriteFile(filepath.Join(outside, "libflip"+tag+".so.1"), bytes.ReplaceAll(evil, []byte("0000"), []byte(tag)), 0o755)
	}
	// The name is the library inside (a new link to it) or a symlink to the one outside, renamed
	// over it. (A rename between two links to one file does nothing: the link left over goes first.)
	loadFlipped(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs}, "[search]\norder = [\"wheels\"]\n", "flip", marks, func(i int, evil bool) {
		name := fmt.Sprintf("libflip%04d.so.1", i)
		tmp := filepath.Join(dir, ".tmp-"+name)
		os.Remove(tmp)
		var err error
		if evil {
			err = os.Symlink(filepath.Join(outside, name), tmp)
		} else {
			err = os.Link(filepath.Join(dir, "."+name), tmp)
		}
		if err == nil {
			err = os.Rename(tmp, filepath.Join(dir, name))
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestFind_refusedIsNotNotFound: a file found but refused is an error of its own that names the
// file and why, in the one line a user reads.
func TestFind_refusedIsNotNotFound(t *testing.T) {
	root := t.TempDir()
	bad := filetree.Put(t, root, "lib64/libcudart.so.12", []byte("not a library"))
	f := newFinder(t, testEnv{"CUDA_PATH": root}, "[search]\norder = [\"envroots\"]\n")
	_, err := f.Find(bg, "cudart")
	var se *SearchError
	if !errors.Is(err, ErrRefused) || errors.Is(err, ErrNotFound) || !errors.As(err, &se) || se.Code() != "refused" || se.Path != bad {
		t.Fatalf("Find = %v; want ErrRefused for %s", err, bad)
	}
	want := fmt.Sprintf(`found %s for "cudart" but refused it: not an ELF file`, bad)
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "pathfinder explain") { // the CLI adds that
		t.Fatalf("message %q; want it to start %q", err, want)
	}
}

// TestLoad_foundButNotLoadable: a found library whose DT_NEEDED is nowhere fails to load with the
// loader's own words and an error of its own; find and explain say beforehand that it would; and
// the search stops there (as cuda.pathfinder's does) instead of loading another step's copy.
func TestLoad_foundButNotLoadable(t *testing.T) {
	needLoader(t)
	site, build, other := t.TempDir(), t.TempDir(), t.TempDir()
	packs := filetree.Put(t, t.TempDir(), "nl.toml", pack("notloadable", `site_packages_linux = ["pf/lib"]`, `install_root_env_vars = ["NOTLOADABLE_HOME"]`))
	missing := filetree.Put(t, build, "libnlmissing.so.1", elfLib(t, "libnlmissing.so.1"))
	lib := filetree.Put(t, site, "pf/lib/libnotloadable.so.1", elfLib(t, "libnotloadable.so.1", "-Wl,--no-as-needed", missing))
	os.Remove(missing)
	elsewhere := filetree.Put(t, other, "lib64/libnotloadable.so.1", elfLib(t, "libnotloadable.so.1"))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs, "NOTLOADABLE_HOME": other}, "")

	found, err := f.Find(bg, "notloadable")
	if err != nil || found.Path != lib || !strings.Contains(found.LoadProblem, "it needs libnlmissing.so.1, which the loader would not find") {
		t.Fatalf("Find = %+v, %v; want %s with the load problem named", found, err, lib)
	}
	ex := f.Explain(bg, DynamicLib, "notloadable")
	if c := ex.Steps[0].Candidates; len(c) != 1 || !c[0].Taken || c[0].LoadProblem != found.LoadProblem {
		t.Fatalf("explain: %+v", ex.Steps[0])
	}
	_, err = f.Load(bg, "notloadable")
	var se *SearchError
	if !errors.Is(err, ErrLoadFailed) || !errors.As(err, &se) || se.Path != lib || se.Code() != "load-failed" {
		t.Fatalf("Load = %v; want ErrLoadFailed for %s", err, lib)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("found %s for \"notloadable\" but could not load it: ", lib)) || !strings.Contains(err.Error(), "libnlmissing.so.1: cannot open shared object file") {
		t.Fatalf("message: %v", err)
	}
	for _, a := range se.Attempts {
		if a.Reason == "" {
			t.Errorf("attempt without a reason: %+v in %+v", a, se.Attempts)
		}
	}
	if got := mappedFiles(t, "libnotloadable.so"); len(got) != 0 {
		t.Fatalf("after the failure the process maps %v; the search should have stopped, not loaded %s", got, elsewhere)
	}
}

// TestFind_ignoredInputsNamed: a variable the search passed over is named, with why, in the error
// and by IgnoredInputs.
func TestFind_ignoredInputsNamed(t *testing.T) {
	empty := t.TempDir()
	f := newFinder(t, testEnv{"CUDA_PATH": "rel/cuda", "VIRTUAL_ENV": "relvenv", "PATHFINDER_SITE_PACKAGES": "/nonexistent/site", "CONDA_PREFIX": empty}, "")
	_, err := f.Find(bg, "cudart")
	for _, want := range []string{
		"$CUDA_PATH=rel/cuda (not an absolute path; pathfinder never resolves one against the working directory)",
		"$VIRTUAL_ENV=relvenv (not an absolute path",
		"$PATHFINDER_SITE_PACKAGES=/nonexistent/site (no such file or directory)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Find error %v; want it to name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "CONDA_PREFIX") {
		t.Fatalf("a usable variable named as ignored: %v", err)
	}
	got := f.IgnoredInputs()
	if len(got) != 3 || got[0].Name != "PATHFINDER_SITE_PACKAGES" {
		t.Fatalf("IgnoredInputs = %+v", got)
	}
	// Driver libraries do not look at those variables: nothing ignored is theirs.
	if _, err := f.Find(bg, "nvcudla"); err != nil && strings.Contains(err.Error(), "ignored") {
		t.Fatalf("nvcudla: %v", err)
	}
}

// TestFind_cudaHomePassedOver: envroots reads CUDA_HOME only when CUDA_PATH is unset, so a CUDA_HOME
// that names another directory is named as passed over, beside what is wrong with CUDA_PATH itself.
func TestFind_cudaHomePassedOver(t *testing.T) {
	home, other := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "cuda")
	filetree.Symlink(t, home, link)
	const passedOver = "(CUDA_PATH is set, and CUDA_HOME is read only when CUDA_PATH is not)"
	tests := []struct {
		name     string
		cudaPath string
		want     []string // in the error, in this order
		none     bool     // nothing ignored
	}{
		{name: "relative CUDA_PATH", cudaPath: "cuda",
			want: []string{"$CUDA_PATH=cuda (not an absolute path", "$CUDA_HOME=" + home + " " + passedOver}},
		{name: "CUDA_PATH that does not exist", cudaPath: "/nonexistent/cuda",
			want: []string{"$CUDA_PATH=/nonexistent/cuda (no such file or directory)", "$CUDA_HOME=" + home + " " + passedOver}},
		{name: "CUDA_PATH another directory", cudaPath: other,
			want: []string{"; ignored $CUDA_HOME=" + home + " " + passedOver}},
		{name: "CUDA_PATH the same directory", cudaPath: home + "/", none: true},
		{name: "CUDA_PATH a link to it", cudaPath: link, none: true},
		{name: "CUDA_PATH unset", none: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFinder(t, testEnv{"CUDA_PATH": tc.cudaPath, "CUDA_HOME": home}, "")
			_, err := f.Find(bg, "cudart")
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Find = %v; want not found", err)
			}
			msg, at := err.Error(), 0
			for _, w := range tc.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error %q lacks %q after offset %d", msg, w, at)
				}
				at += i + len(w)
			}
			got := f.IgnoredInputs()
			if tc.none != (len(got) == 0) || !tc.none && got[len(got)-1].Name != "CUDA_HOME" {
				t.Fatalf("IgnoredInputs = %+v", got)
			}
			if tc.none && strings.Contains(msg, "ignored") {
				t.Fatalf("error names an input it used: %v", err)
			}
			// Answered from the result cache, by an Engine whose steps never ran: the same.
			cached := newFinder(t, testEnv{"CUDA_PATH": tc.cudaPath, "CUDA_HOME": home}, "")
			_, err2 := cached.Find(bg, "cudart")
			if hit := cached.searches.Load() == 0; !hit || err2 == nil || err2.Error() != msg || !slices.Equal(cached.IgnoredInputs(), got) {
				t.Fatalf("from the cache (hit %v): %v, ignored %+v; want %v, ignored %+v", hit, err2, cached.IgnoredInputs(), err, got)
			}
		})
	}
}

// TestSearchError_namesNoCommand: a Go program's errors do not point at the command line; only the
// CLI's find and load lines add "(pathfinder explain NAME lists them)".
func TestSearchError_namesNoCommand(t *testing.T) {
	root := t.TempDir()
	filetree.PutMode(t, root, "lib64/libcudart.so.12", []byte("not a library"), 0o644)
	f := newFinder(t, map[string]string{"CUDA_PATH": root}, "")
	w := newFinder(t, nil, "")
	w.platform = mustPlatform(t, "windows/amd64")
	for _, tt := range []struct {
		name string
		err  func() error
		code string
	}{
		{"not found", func() error { _, err := f.FindKind(bg, HeaderDir, "cccl"); return err }, "not-found"},
		{"other target", func() error { _, err := w.Find(bg, "cudnn"); return err }, "not-found"},
		{"refused", func() error { _, err := f.Find(bg, "cudart"); return err }, "refused"},
		{"explain", func() error { return f.Explain(bg, DynamicLib, "nvrtc").Err }, "not-found"},
	} {
		err := tt.err()
		var se *SearchError
		if !errors.As(err, &se) || se.Code() != tt.code || strings.Contains(err.Error(), "pathfinder explain") {
			t.Errorf("%s: %v; want a %s error that names no command", tt.name, err, tt.code)
		}
	}
}

func mustPlatform(t *testing.T, s string) abi.Platform {
	t.Helper()
	p, err := ParsePlatform(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFind_contextEnded: a search whose context ends says so (errors.Is with the context's error),
// never "not found", and nothing of it is remembered: the next call with a live context searches.
func TestFind_contextEnded(t *testing.T) {
	site := t.TempDir()
	want := filetree.Put(t, site, "nvidia/cu13/lib/libnvfatbin.so.13", elfLib(t, "libnvfatbin.so.13"))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_NO_CACHE": "1"}, "")
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err := f.Find(ctx, "nvfatbin")
	var se *SearchError
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotFound) || !errors.As(err, &se) || se.Code() != "canceled" {
		t.Fatalf("Find with a canceled context = %v", err)
	}
	lib, err := f.Find(bg, "nvfatbin")
	if err != nil || lib.Path != want {
		t.Fatalf("Find afterwards = %+v, %v; want %s", lib, err, want)
	}
	_, err = f.Load(ctx, "nvjpeg")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a canceled context = %v", err)
	}
}

// TestFind_condaIsAnAnchorPoint: $CONDA_PREFIX is searched like a toolkit root, with the library's
// anchor directories: nvvm in the env's nvvm/lib64 is found, and wins over CUDA_HOME's.
func TestFind_condaIsAnAnchorPoint(t *testing.T) {
	env, cuda := t.TempDir(), t.TempDir()
	want := filetree.Put(t, env, "nvvm/lib64/libnvvm.so.4", elfLib(t, "libnvvm.so.4"))
	filetree.Put(t, cuda, "nvvm/lib64/libnvvm.so.4", elfLib(t, "libnvvm.so.4"))
	lt := filetree.Put(t, env, "lib/libcublasLt.so.12", elfLib(t, "libcublasLt.so.12"))
	f := newFinder(t, testEnv{"CONDA_PREFIX": env, "CUDA_HOME": cuda}, "")
	lib, err := f.Find(bg, "nvvm")
	if err != nil || lib.Path != want || lib.FoundVia != "conda" {
		t.Fatalf("Find(nvvm) = %+v, %v; want %s via conda", lib, err, want)
	}
	if lib, err := f.Find(bg, "cublasLt"); err != nil || lib.Path != lt || lib.FoundVia != "conda" {
		t.Fatalf("Find(cublasLt) = %+v, %v; want %s via conda", lib, err, lt)
	}
}

// TestLoad_descriptorOrigin: what README says of a library loaded through its descriptor: $ORIGIN in
// its DT_RUNPATH means /proc/self/fd, so a neighbour it finds only through $ORIGIN is not found;
// the same library in a directory no one else may write loads by its path, neighbour and all.
func TestLoad_descriptorOrigin(t *testing.T) {
	needLoader(t)
	for _, shared := range []bool{true, false} {
		site := t.TempDir()
		dir := filepath.Join(site, "pf", "lib")
		os.MkdirAll(dir, 0o755)
		if shared {
			os.Chmod(dir, 0o777)
		}
		name := map[bool]string{true: "originfd", false: "originpath"}[shared]
		packs := filetree.Put(t, t.TempDir(), "o.toml", pack(name, `site_packages_linux = ["pf/lib"]`))
		nb := filetree.Put(t, dir, "lib"+name+"nb.so.1", elfLib(t, "lib"+name+"nb.so.1"))
		filetree.Put(t, dir, "lib"+name+".so.1", elfLib(t, "lib"+name+".so.1", "-Wl,--no-as-needed", nb, "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags"))
		f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs}, "")
		_, err := f.Load(bg, name)
		if shared != errors.Is(err, ErrLoadFailed) {
			t.Fatalf("others may write the directory: %v; Load = %v", shared, err)
		}
	}
}

// TestUnknown_namesEveryKind: a name that is not one of its kind's says what it is in the catalog,
// looking at every kind's names and every library's files; a typo still gets the close names.
func TestUnknown_namesEveryKind(t *testing.T) {
	f := newFinder(t, nil, "")
	tests := []struct {
		kind        Kind
		name, want  string
		suggestions []string
	}{
		{Bitcode, "libdevice", `unknown bitcode library "libdevice": "libdevice" is a bitcode library named "device"`, []string{"device"}},
		{DynamicLib, "libdevice", `unknown library "libdevice": "libdevice" is a bitcode library named "device"`, nil},
		{DynamicLib, "libcudart", `unknown library "libcudart": "libcudart" is a library named "cudart"`, []string{"cudart"}},
		{DynamicLib, "libcudart.so.12", `unknown library "libcudart.so.12": "libcudart.so.12" is a library named "cudart"`, []string{"cudart"}},
		{DynamicLib, "nvcc", `unknown library "nvcc": "nvcc" is a header set and a binary utility`, nil},
		{HeaderDir, "nvcc", "", nil}, // a header set's name: found or not, not unknown
		{DynamicLib, "cudartt", `unknown library "cudartt" (did you mean "cudart" or "cuda"?)`, []string{"cudart", "cuda"}},
		{Bitcode, "devic", `unknown bitcode library "devic" (did you mean "device"?)`, []string{"device"}},
	}
	for _, tt := range tests {
		_, err := f.FindKind(bg, tt.kind, tt.name)
		var se *SearchError
		isUnknown := errors.As(err, &se) && errors.Is(err, ErrUnknown)
		if tt.want == "" {
			if isUnknown {
				t.Errorf("%s %s: %v", tt.kind, tt.name, err)
			}
			continue
		}
		if !isUnknown || err.Error() != tt.want || fmt.Sprint(se.Suggestions) != fmt.Sprint(tt.suggestions) {
			t.Errorf("%s %s: %v, suggestions %q; want %s, %q", tt.kind, tt.name, err, se.Suggestions, tt.want, tt.suggestions)
		}
	}
}
