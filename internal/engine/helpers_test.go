package engine

import (
	"context"
	"debug/pe"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/resultcache"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakepe"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
	"github.com/pathfinder-dev/pathfinder/internal/wasm"
)

// libCache keeps each distinct gcc-built library once per test binary: tests copy it where they need it.
var (
	libMu    sync.Mutex
	libCache = map[string][]byte{}
	libDir   string
)

// elfLib returns the bytes of a real shared object with the given soname, linked against deps (each a
// path to a library built by elfLib), built by gcc.
func elfLib(t testing.TB, soname string, extraArgs ...string) []byte {
	t.Helper()
	key := soname + "\x00" + strings.Join(extraArgs, "\x00")
	libMu.Lock()
	defer libMu.Unlock()
	if b, ok := libCache[key]; ok {
		return b
	}
	if libDir == "" {
		d, err := os.MkdirTemp("", "pathfinder-libs-")
		if err != nil {
			t.Fatal(err)
		}
		libDir = d
	}
	sym := "lib_" + strings.NewReplacer(".", "_", "-", "_").Replace(soname)
	out := filepath.Join(libDir, fmt.Sprintf("%s-%d.so", sym, len(libCache)))
	elfso.Build(t, out, soname, fmt.Sprintf("int %s_marker(void) { return 42; }\n", sym), extraArgs...)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	libCache[key] = b
	return b
}

// anyLib is a real shared object without a DT_SONAME: the loader knows such a file by its path, so
// validation takes it for any library's name. Tests use it where one file stands for many names.
func anyLib(t testing.TB) []byte {
	t.Helper()
	return elfLib(t, "")
}

// pieExecutable is a position-independent executable from gcc: an ET_DYN file that is no library.
func pieExecutable(t testing.TB) []byte {
	t.Helper()
	dir := t.TempDir()
	src, out := filepath.Join(dir, "main.c"), filepath.Join(dir, "pie")
	os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644)
	if b, err := exec.Command("gcc", "-fPIE", "-pie", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc -pie: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testEnv is an environment with nothing from the machine in it but what the test sets.
type testEnv map[string]string

func (e testEnv) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

func (e testEnv) get(k string) string { return e[k] }

// check is Granted.Check with the refusal as text, "" for none.
func check(g *candidate.Granted, p string, e *catalog.Entry, plat abi.Platform) (string, string) {
	h, err := g.Check(p, e, plat)
	if err != nil {
		return h, err.Error()
	}
	return h, ""
}

// newFinder returns an Engine isolated from the machine's config files and environment; each with
// sets what else the test hands in (hooks, another LookupEnv) before it is made.
func newFinder(t testing.TB, env testEnv, config string, with ...func(*Options)) *Engine {
	t.Helper()
	if env == nil {
		env = testEnv{}
	}
	if _, ok := env["PATHFINDER_CACHE_DIR"]; !ok {
		env["PATHFINDER_CACHE_DIR"] = sharedCacheDir
	}
	opts := Options{LookupEnv: env.lookup, SystemConfigDir: t.TempDir()}
	if env["PATHFINDER_DRIVER_VERSION"] == "" {
		// The compatibility check is held to the test's driver, never to this machine's.
		opts.Driver = &driver.Report{State: driver.StateNoDriver, Summary: "no driver: a test asks no machine"}
	}
	if config != "" {
		opts.ConfigFile = filetree.Put(t, t.TempDir(), "pathfinder.toml", []byte(config))
	}
	// Compiling a module under -race takes many seconds; tests share one engine, so each module is
	// compiled once per test binary, unless a test is about the compilation cache itself.
	if env["PATHFINDER_TEST_OWN_ENGINE"] == "" {
		opts.hooks.engine = testEngine()
	}
	opts.hooks.compileTimeout = testCompileTimeout
	for _, w := range with {
		w(&opts)
	}
	return newFinderOpts(t, opts)
}

var testEngine = sync.OnceValue(func() *wasm.Engine {
	e := wasm.NewEngine(filepath.Join(sharedCacheDir, "engine"))
	e.CompileTimeout = testCompileTimeout
	return e
})

// testCompileTimeout bounds compiles in tests instead of wasm's default: the product's bound (30 s and
// 10 s a MiB) is met by a busy machine compiling a Go plugin under -race, and a refusal would be
// remembered in the shared cache, failing every later run. Only tests of the bound set one of theirs.
const testCompileTimeout = time.Hour

// sharedCacheDir is one compilation cache for the whole test binary, so only the first test compiles.
var sharedCacheDir string

func TestMain(m *testing.M) {
	// One compilation cache for every test binary and run: compiling a module under -race takes many
	// seconds, loading it from the cache a fraction of one.
	sharedCacheDir = filepath.Join(os.TempDir(), "pathfinder-test-cache")
	code := m.Run()
	if libDir != "" {
		os.RemoveAll(libDir)
	}
	os.Exit(code)
}

var bg = context.Background()

// resultKey is the result cache's key of a find of name by f now, its compatibility check's
// inputs included.
func (f *Engine) resultKey(kind Kind, name string) string {
	return f.results.Key(kind, name, f.checkFor(kind, name, true).key())
}

func dump(ex *search.Explanation) string {
	var b strings.Builder
	for _, st := range ex.Steps {
		b.WriteString(st.Step + " " + string(st.Outcome) + " " + st.Detail + "\n")
		for _, c := range st.Candidates {
			b.WriteString("  cand " + c.Path + " refused=" + c.Refused + "\n")
		}
		for _, a := range st.Tried {
			b.WriteString("  tried " + a.Path + " " + a.Reason + "\n")
		}
		for _, l := range st.Log {
			b.WriteString("  log " + l + "\n")
		}
	}
	return b.String()
}

var dllAMD64 = fakepe.File(pe.IMAGE_FILE_MACHINE_AMD64, true)

// pack is a one-library descriptor pack; extra is appended to its table.
func pack(name string, extra ...string) []byte {
	return []byte(fmt.Sprintf("[[library]]\nname = %q\npackaged_with = \"other\"\nlinux_sonames = [\"lib%s.so.1\"]\n%s", name, name, strings.Join(extra, "\n")))
}

// newFinderOpts is New with opts, closed when the test ends.
func newFinderOpts(t testing.TB, opts Options) *Engine {
	t.Helper()
	f, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// findFresh finds name with a fresh Engine (a new process, as far as the cache can tell) and reports
// whether it was answered from the result cache.
func findFresh(t *testing.T, env testEnv, config, name string) (*search.Library, error, bool) {
	t.Helper()
	f := newFinder(t, env, config)
	lib, err := f.Find(bg, name)
	return lib, err, f.searches.Load() == 0
}

// rewriteEntry rewrites the result cache entry of f's find of cudart, checksum and all, to answer the
// library at path (found via foundVia, where that is not ""), every observation kept and one of path
// added: all a re-check of observations can see holds.
func rewriteEntry(t *testing.T, f *Engine, path, foundVia string) {
	t.Helper()
	p := f.results.Path(f.resultKey(DynamicLib, "cudart"))
	data, ok := cachedir.Read(p)
	var c resultcache.Entry
	if !ok || json.Unmarshal(data, &c) != nil || c.Library == nil {
		t.Fatalf("no entry to rewrite at %s", p)
	}
	fi, err := os.Stat(path)
	c.Library.Path = path
	if foundVia != "" {
		c.Library.FoundVia = foundVia
	}
	c.Seen = append(c.Seen, observe.Observation{Path: path, What: observe.Stat, Seen: observe.StatSeen(fi, err)})
	b, _ := json.Marshal(c)
	cachedir.Write(p, b)
}

// ctorLib is a shared object with this soname whose constructor creates the file marker: a test
// tells from it whether the loader ran this library's code. sym names a function it defines.
func ctorLib(t *testing.T, soname, marker, sym string) []byte {
	t.Helper()
	src := fmt.Sprintf(`#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void ran(void) { int fd = open(%q, O_CREAT|O_WRONLY, 0644); if (fd >= 0) close(fd); }
int %s(void) { return 7; }
`, marker, sym)
	out := filepath.Join(t.TempDir(), soname)
	elfso.Build(t, out, soname, src)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func needLoader(t *testing.T) {
	t.Helper()
	if !loader.Available {
		t.Skip("this build cannot load libraries")
	}
}

// flipPlans are where another user points a granted name at each moment of a load, true for the
// library no check may pass: before the search, between the candidate's check and its load
// (beforeLoad), and after the last check, as the loader opens it (beforeDlopen); every combination.
var flipPlans = func() (plans []struct{ search, load, dlopen bool }) {
	for i := range 8 {
		plans = append(plans, struct{ search, load, dlopen bool }{i&1 != 0, i&2 != 0, i&4 != 0})
	}
	return plans
}()

// loadFlipped loads prefix0000 … prefix0007 with an Engine of env and config, one name per flip plan,
// point(i, evil) pointing the i-th at each moment as its plan says; the Engine's beforeLoad and
// beforeDlopen hooks are the flips.
// Each library's constructor leaves good-NNNN or evil-NNNN in marks. The evil code never runs; a
// name that led to the good library when checked loads it, one that led elsewhere is refused.
func loadFlipped(t *testing.T, env testEnv, config, prefix, marks string, point func(i int, evil bool)) {
	t.Helper()
	var i int
	f := newFinder(t, env, config, func(o *Options) {
		o.hooks.beforeLoad = func(string) { point(i, flipPlans[i].load) }
		o.hooks.beforeDlopen = func(string) { point(i, flipPlans[i].dlopen) }
	})
	for i = range flipPlans {
		pl := flipPlans[i]
		point(i, pl.search)
		_, err := f.Load(bg, fmt.Sprintf("%s%04d", prefix, i))
		if (err == nil) == pl.search {
			t.Errorf("%+v: Load = %v; want it loaded exactly when the name led to the good library as it was checked", pl, err)
		}
		_, ranGood := os.Stat(filepath.Join(marks, fmt.Sprintf("good-%04d", i)))
		if _, ranEvil := os.Stat(filepath.Join(marks, fmt.Sprintf("evil-%04d", i))); ranEvil == nil {
			t.Errorf("%+v: the evil library's constructor ran", pl)
		}
		if (ranGood == nil) != (err == nil) {
			t.Errorf("%+v: Load = %v, yet the good library's code ran: %v", pl, err, ranGood == nil)
		}
	}
}
