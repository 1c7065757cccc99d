//go:build linux

package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/resultcache"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// Load, soak and fault tests. The normal run is sized for -race on two cores; PATHFINDER_SOAK=1 runs
// the long versions (100,000 sequential searches instead of 2,000, 10,000 Finders instead of 100):
//
//	go test -race -run 'Reliability|Faults' ./internal/engine/
//	PATHFINDER_SOAK=1 go test -run 'TestReliability_(sequentialSearches|manyFinders)' -v -timeout 2h ./internal/engine/

func soak() bool { return os.Getenv("PATHFINDER_SOAK") == "1" }

// reliabilityFound are libraries the wheels step finds in reliabilitySite; reliabilityMissing are
// libraries no step finds there, and that no test loads (the already-loaded step would find them).
var (
	reliabilityFound   = []string{"cudart", "nvfatbin", "nvJitLink", "nvrtc", "cublas", "cublasLt", "cufft", "curand", "cusolver", "cusparse"}
	reliabilityMissing = []string{"nppial", "nppicc", "nppidei", "nppif", "nppist", "nppisu", "nvjpeg", "cufile", "cudnn", "cutensor"}
)

// reliabilitySite is a site-packages directory with a real shared object for each of
// reliabilityFound, under its newest soname; it returns the expected path of each.
func reliabilitySite(t *testing.T) (site string, want map[string]string) {
	t.Helper()
	site = t.TempDir()
	want = map[string]string{}
	so := anyLib(t) // the content only has to pass validation
	f := newFinder(t, nil, "")
	for _, name := range reliabilityFound {
		want[name] = filetree.Put(t, site, "nvidia/cu13/lib/"+f.FileNames(DynamicLib, name)[0], so)
	}
	return site, want
}

// memFigures is what the process holds: the Go heap (which includes every plugin instance's linear
// memory: wazero allocates it with make([]byte)) and the resident set.
type memFigures struct{ heapInuse, rss uint64 }

func measureMem(t *testing.T) memFigures {
	t.Helper()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memFigures{heapInuse: ms.HeapInuse, rss: rss(t)}
}

// rss reads the resident set size from /proc/self/statm (in pages).
func rss(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b))
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * uint64(os.Getpagesize())
}

func (m memFigures) String() string {
	return fmt.Sprintf("heap in use %.1f MiB, RSS %.1f MiB", float64(m.heapInuse)/(1<<20), float64(m.rss)/(1<<20))
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// grown is b-a, or 0 when it shrank.
func grown(a, b uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

// TestReliability_concurrentCallers has 1,000 goroutines ask one Engine at once: half for one
// library, the rest spread over ten found and ten missing ones. Every caller must get its answer
// before the deadline, and each name must be searched exactly once. "At once" is made exact: the
// first step reads a variable through a Getenv that holds every search at a gate until all 1,000
// callers are inside the Engine, so no caller can come late to a search that already ended (a
// not-found answer is not remembered, and a late caller would rightly search again).
func TestReliability_concurrentCallers(t *testing.T) {
	const callers = 1000
	site, want := reliabilitySite(t)
	names := append(append([]string(nil), reliabilityFound...), reliabilityMissing...)

	gate := make(chan struct{})
	var atGate atomic.Int64
	// Each caller arrives once, before the gate opens: at the gate, searching, or waiting for the
	// search of its name. A send never blocks (a read after the gate opens has no one to tell).
	arrived := make(chan struct{}, callers)
	arrive := func() {
		select {
		case arrived <- struct{}{}:
		default:
		}
	}
	env := testEnv{"PATHFINDER_SITE_PACKAGES": site}
	// conda first, so that every search reads CONDA_PREFIX before the wheels step answers it.
	var searching atomic.Bool // New reads CONDA_PREFIX too, for packs: only the searches wait at the gate
	f := newFinder(t, env, `[search]
order = ["conda", "wheels", "already-loaded", "system", "envroots", "programfiles", "canary"]
`, func(o *Options) {
		o.LookupEnv = func(k string) (string, bool) {
			if k == "CONDA_PREFIX" && searching.Load() {
				atGate.Add(1)
				arrive()
				<-gate
			}
			v, ok := env[k]
			return v, ok
		}
		o.hooks.waiting = arrive
	})
	searching.Store(true)
	f.results = resultcache.New("") // real searches: nothing answered from disk (the compilation cache stays on)
	opened := false
	openGate := func() {
		if !opened {
			opened = true
			close(gate)
		}
	}
	defer openGate()

	before := measureMem(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	type answer struct {
		name, path string
		err        error
	}
	answers := make([]answer, callers)
	var wg sync.WaitGroup
	for i := range callers {
		name := names[i/2%len(names)]
		if i%2 == 0 {
			name = "cudart"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			lib, err := f.Find(ctx, name)
			answers[i] = answer{name: name, err: err}
			if err == nil {
				answers[i].path = lib.Path
			}
		}()
	}

	// Open the gate once every caller has arrived: each name's search at it, every other caller
	// waiting for one of them. A second search of a name would have arrived at the gate too.
	for n := 0; n < callers; n++ {
		select {
		case <-arrived:
		case <-ctx.Done():
			t.Fatalf("before the deadline, only %d of %d callers reached the Engine and %d searches the gate", n, callers, atGate.Load())
		}
	}
	if n := atGate.Load(); n != int64(len(names)) {
		t.Errorf("%d searches at the gate for %d names, want one each", n, len(names))
	}
	peakDuring := measureMem(t)
	openGate()

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	peak := make(chan uint64)
	go func() { // the heap's high-water mark while the searches run
		var ms runtime.MemStats
		var high uint64
		for {
			runtime.ReadMemStats(&ms)
			high = max(high, ms.HeapInuse)
			select {
			case <-done:
				peak <- high
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("callers still waiting after 3 minutes: deadlock")
	}
	if n := f.searches.Load(); n != int64(len(names)) {
		t.Errorf("%d searches for %d names and %d callers, want one per name", n, len(names), callers)
	}
	for i, a := range answers {
		switch w, found := want[a.name]; {
		case found && (a.err != nil || a.path != w):
			t.Errorf("caller %d, %s: %q, %v; want %s", i, a.name, a.path, a.err, w)
		case !found && !errors.Is(a.err, ErrNotFound):
			t.Errorf("caller %d, %s: %q, %v; want ErrNotFound", i, a.name, a.path, a.err)
		}
	}

	high := <-peak
	after := measureMem(t)
	f.Close()
	closed := measureMem(t)
	t.Logf("%d callers, %d names, answered in %v: before %v; all callers waiting %v; heap at most %.1f MiB while searching; after %v; after Close %v",
		callers, len(names), time.Since(start).Round(time.Millisecond), before, peakDuring, mib(high), after, closed)
	// What stays is the compiled module and a few idle instances per step (each a few MiB of guest
	// memory), not anything per caller: measured, 50 MiB after; 130 MiB at most while the 20 searches
	// run (250 under -race).
	if g := grown(before.heapInuse, after.heapInuse); g > 128<<20 {
		t.Errorf("heap grew by %.1f MiB for %d callers", mib(g), callers)
	}
	if high > 512<<20 {
		t.Errorf("heap reached %.1f MiB while %d searches ran", mib(high), len(names))
	}
}

// TestReliability_sequentialSearches runs many real searches in one process, alternating a found
// and a missing library (the missing one runs every step): Explain never answers from memory or from
// disk. The Go heap, which holds every plugin instance's memory, and the RSS must stay flat once the
// instances have warmed up: what grows with the number of searches is a leak. Figures are taken after
// a tenth of the searches, at half way and at the end; the second half may not grow.
func TestReliability_sequentialSearches(t *testing.T) {
	n := 2000
	if soak() {
		n = 100_000
	}
	site, want := reliabilitySite(t)
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site}, "")
	start := time.Now()
	var warm, half memFigures
	first := measureMem(t)
	for i := range n {
		switch i {
		case n / 10:
			warm = measureMem(t)
		case n / 2:
			half = measureMem(t)
		}
		name := reliabilityFound[i/2%len(reliabilityFound)]
		if i%2 == 1 {
			name = reliabilityMissing[i/2%len(reliabilityMissing)]
		}
		ex := f.Explain(bg, DynamicLib, name)
		if w, found := want[name]; found && (ex.Err != nil || ex.Result.Path != w) || !found && !errors.Is(ex.Err, ErrNotFound) {
			t.Fatalf("search %d, %s: %+v, %v", i, name, ex.Result, ex.Err)
		}
	}
	end := measureMem(t)
	t.Logf("%d searches in %v (%v each): at start %v; after %d %v; after %d %v; at the end %v",
		n, time.Since(start).Round(time.Millisecond), (time.Since(start) / time.Duration(n)).Round(time.Microsecond),
		first, n/10, warm, n/2, half, end)
	if g := grown(half.heapInuse, end.heapInuse); g > 16<<20 {
		t.Errorf("heap grew by %.1f MiB over the last %d searches", mib(g), n-n/2)
	}
	// Under the race detector RSS holds its shadow memory too, and moved by 70 MiB in a full run
	// with the heap flat: there the heap alone is held, and .ci/run runs this test without -race.
	if g := grown(half.rss, end.rss); g > 64<<20 && !raceEnabled {
		t.Errorf("RSS grew by %.1f MiB over the last %d searches", mib(g), n-n/2)
	}
}

// TestReliability_manyFinders opens, uses and closes Engine after Engine in one process, as a
// long-lived program that reloads its config would: once closed and dropped, an Engine must leave
// nothing behind, neither memory (runtimes, compiled code, instances) nor file descriptors (granted
// roots, cache files). 100 Finders, 10,000 with PATHFINDER_SOAK=1; each searches with the tiny step.
func TestReliability_manyFinders(t *testing.T) {
	n := 100
	if soak() {
		n = 10_000
	}
	lib := filetree.Put(t, t.TempDir(), "lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	config := filetree.Put(t, t.TempDir(), "pathfinder.toml", []byte(tinyStep(t, "", lib)))
	env := testEnv{"PATHFINDER_CACHE_DIR": t.TempDir(), "PATHFINDER_CONFIG": config}
	sys := t.TempDir()
	use := func() {
		f, err := New(Options{LookupEnv: env.lookup, SystemConfigDir: sys})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if ex := f.Explain(bg, DynamicLib, "cudart"); ex.Err != nil || ex.Result.Path != lib {
			t.Fatalf("%v\n%s", ex.Err, dump(ex))
		}
	}
	for range 10 {
		use()
	}
	warm, fds := measureMem(t), openFiles(t)
	for range n {
		use()
	}
	end, fdsEnd := measureMem(t), openFiles(t)
	t.Logf("%d Finders: after the first 10 %v, %d open files; after %d more %v, %d open files", n+10, warm, fds, n, end, fdsEnd)
	if fdsEnd > fds {
		t.Errorf("%d files left open by %d closed Finders", fdsEnd-fds, n)
	}
	if g := grown(warm.heapInuse, end.heapInuse); g > 8<<20 {
		t.Errorf("heap grew by %.1f MiB over %d closed Finders", mib(g), n)
	}
	if g := grown(warm.rss, end.rss); g > 64<<20 && !raceEnabled { // see TestReliability_sequentialSearches
		t.Errorf("RSS grew by %.1f MiB over %d closed Finders", mib(g), n)
	}
}

func openFiles(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// tinyStep writes a tiny hand-assembled plugin (see hostileModule) that proposes lib, and returns a
// config whose only step it is, granted lib's directory. It compiles in milliseconds even under
// -race, where the builtin module takes most of a minute: the cache faults below need compiles.
// The plugin file goes in dir ("" for a temp dir).
func tinyStep(t *testing.T, dir, lib string, extra ...string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	resp := fmt.Sprintf(`{"candidates":[{"path":%q,"found_via":"tiny"}]}`, lib)
	m := hostileModule{version: hostileI32(abi.Version), alloc: hostileI32(1024), search: hostileI64(uint64(len(resp))), pages: 1, data: []byte(resp)}
	src := filetree.PutMode(t, dir, "tiny.wasm", m.encode(), 0o644)
	return fmt.Sprintf("[search]\norder = [\"tiny\"]\n\n[plugin.tiny]\nsource = %q\nread = [%q]\n%s", src, filepath.Dir(lib), strings.Join(extra, "\n"))
}

// otherStep is a second tiny plugin with different code (an _initialize, and a search that proposes
// nothing), as step "other".
func otherStep(t *testing.T) string {
	m := hostileModule{initialize: []byte{0x0b}, version: hostileI32(abi.Version), alloc: hostileI32(2048), search: hostileI64(0), pages: 2}
	src := filetree.PutMode(t, t.TempDir(), "other.wasm", m.encode(), 0o644)
	return fmt.Sprintf("[plugin.other]\nsource = %q\n", src)
}

// compiledEntries lists the compiled modules in the compilation cache under base: wazero names each
// file by a sha256.
func compiledEntries(t *testing.T, base string) []string {
	t.Helper()
	var out []string
	for _, p := range compilationCacheFiles(t, base) {
		if n := filepath.Base(p); len(n) == 64 && strings.Trim(n, "0123456789abcdef") == "" {
			out = append(out, p)
		}
	}
	return out
}

// compilationCacheFiles lists every file of the compilation cache under base.
func compilationCacheFiles(t *testing.T, base string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(base, p)
		if err == nil && !d.IsDir() && strings.HasPrefix(rel, "wazero-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// reliabilityChild is what TestReliability_child does in a child process.
type reliabilityChild struct {
	Env     map[string]string
	Config  string
	Names   []string
	Explain bool // search afresh instead of Find (which may answer from the result cache)
}

type childAnswer struct{ Name, Path, Err string }

// TestReliability_child is not a test of its own: the fault tests run an Engine in a child process
// through it (os/exec's helper-process pattern), for two processes at once, for another user, and
// for faults that may crash the process. Each answer is one line on stdout.
func TestReliability_child(t *testing.T) {
	spec := os.Getenv("PATHFINDER_RELIABILITY_CHILD")
	if spec == "" {
		t.Skip("run by the fault tests, in a child process")
	}
	var c reliabilityChild
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		t.Fatal(err)
	}
	f := newFinder(t, testEnv(c.Env), c.Config)
	for _, name := range c.Names {
		a := childAnswer{Name: name}
		var lib *search.Library
		var err error
		if c.Explain {
			ex := f.Explain(bg, DynamicLib, name)
			if err = ex.Err; err == nil {
				lib = &ex.Result.Library
			} else {
				err = fmt.Errorf("%w\n%s", err, dump(ex))
			}
		} else {
			lib, err = f.Find(bg, name)
		}
		if err != nil {
			a.Err = err.Error()
		} else {
			a.Path = lib.Path
		}
		b, _ := json.Marshal(a)
		fmt.Printf("answer %s\n", b)
	}
}

// childProcess starts TestReliability_child in bin (the test binary when "") with c, as cred's
// user when cred is not nil.
func childProcess(t *testing.T, bin string, c reliabilityChild, cred *syscall.Credential) *exec.Cmd {
	t.Helper()
	if bin == "" {
		bin = os.Args[0]
	}
	spec, _ := json.Marshal(c)
	cmd := exec.Command(bin, "-test.run=^TestReliability_child$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PATHFINDER_RELIABILITY_CHILD="+string(spec))
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return cmd
}

// childAnswers runs cmd to its end and returns its answers by name; a child that fails fails the test.
func childAnswers(t *testing.T, cmd *exec.Cmd) map[string]childAnswer {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("child process: %v\n%s%s", err, lastLines(out.String(), 30), lastLines(errb.String(), 30))
	}
	return parseAnswers(t, out.String())
}

func parseAnswers(t *testing.T, out string) map[string]childAnswer {
	t.Helper()
	got := map[string]childAnswer{}
	for _, l := range strings.Split(out, "\n") {
		if b, ok := strings.CutPrefix(l, "answer "); ok {
			var a childAnswer
			if err := json.Unmarshal([]byte(b), &a); err != nil {
				t.Fatal(err)
			}
			got[a.Name] = a
		}
	}
	return got
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n") + "\n"
}

// TestFaults_compilationCache breaks the compilation cache between two Finders, or under a running
// one, in each way a disk, a crash, an upgrade or a careless user can. The next search must work and
// must not run what it found there: a broken entry is ignored and compiled afresh, and the next
// process finds a good entry again.
func TestFaults_compilationCache(t *testing.T) {
	dir := t.TempDir()
	lib := filetree.Put(t, dir, "lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	eachEntry := func(edit func(t *testing.T, path string, data []byte)) func(t *testing.T, base string) {
		return func(t *testing.T, base string) {
			entries := compiledEntries(t, base)
			if len(entries) == 0 {
				t.Fatal("no compilation cache entries to break")
			}
			for _, p := range entries {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				edit(t, p, data)
			}
		}
	}
	write := func(t *testing.T, p string, data []byte) {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// rebuilt checks that each entry is a regular file of this user's that no one else may write:
	// the entry broken below was not used, but compiled again.
	rebuilt := func(t *testing.T, base string) {
		for _, p := range compiledEntries(t, base) {
			fi, err := os.Lstat(p)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
				t.Errorf("entry %s kept as it was: %v %v", p, fi.Mode(), err)
			}
		}
	}
	tests := []struct {
		name  string
		other bool                            // populate the cache with otherStep's module too
		brk   func(t *testing.T, base string) // between the first Engine and the second
		child bool                            // search in a child process: what was broken may crash it
		after func(t *testing.T, base string) // checks the cache after
	}{
		{name: "garbage", brk: eachEntry(func(t *testing.T, p string, data []byte) {
			write(t, p, bytes.Repeat([]byte("garbage!"), len(data)/8+1))
		})},
		{name: "garbage after a valid header", brk: eachEntry(func(t *testing.T, p string, data []byte) {
			for i := 16; i < len(data); i++ {
				data[i] ^= 0x5a
			}
			write(t, p, data)
		})},
		{name: "truncated to half", brk: eachEntry(func(t *testing.T, p string, data []byte) { write(t, p, data[:len(data)/2]) })},
		{name: "empty", brk: eachEntry(func(t *testing.T, p string, data []byte) { write(t, p, nil) })},
		{name: "a directory in place of an entry", brk: eachEntry(func(t *testing.T, p string, data []byte) {
			os.Remove(p)
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		})},
		{name: "written by another wazero version", brk: eachEntry(func(t *testing.T, p string, data []byte) {
			// The header is "WAZEVO", the version's length, the version: change its last byte.
			data[7+int(data[6])-1] ^= 1
			write(t, p, data)
		})},
		{name: "another version's directory", brk: func(t *testing.T, base string) {
			for _, p := range compiledEntries(t, base) {
				d := filepath.Dir(p)
				if err := os.Rename(d, filepath.Join(filepath.Dir(d), "wazero-v0.0.1-"+runtime.GOARCH+"-"+runtime.GOOS)); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
		}},
		// Entries whose contents match the checksum, but that someone else could have written: native
		// code the host would run. Never used.
		{name: "an entry others can write", after: rebuilt, brk: eachEntry(func(t *testing.T, p string, _ []byte) {
			if err := os.Chmod(p, 0o666); err != nil {
				t.Fatal(err)
			}
		})},
		{name: "an entry another user owns", after: rebuilt, brk: eachEntry(func(t *testing.T, p string, _ []byte) {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Skipf("needs root to give a file to nobody: %v", err)
			}
		})},
		{name: "a symlink in place of an entry", after: rebuilt, brk: eachEntry(func(t *testing.T, p string, data []byte) {
			target := filetree.Put(t, t.TempDir(), "entry", data)
			os.Remove(p)
			filetree.Symlink(t, target, p)
		})},
		// Another module's entry under this module's name: wazero checks only a checksum of the
		// code, so what runs is the other module's code, or the process crashes.
		{name: "entries renamed: another module's entry under this one's name", other: true, child: true, brk: func(t *testing.T, base string) {
			entries := compiledEntries(t, base)
			if len(entries) != 2 {
				t.Fatalf("want the entries of two modules, have %v", entries)
			}
			tmp := entries[0] + ".swap"
			os.Rename(entries[0], tmp)
			os.Rename(entries[1], entries[0])
			os.Rename(tmp, entries[1])
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			env := testEnv{"PATHFINDER_TEST_OWN_ENGINE": "1", "PATHFINDER_CACHE_DIR": base}
			config := tinyStep(t, "", lib)
			if tt.other {
				config = strings.Replace(tinyStep(t, "", lib, otherStep(t)), `order = ["tiny"]`, `order = ["other", "tiny"]`, 1)
			}
			if ex := newFinder(t, env, config).Explain(bg, DynamicLib, "cudart"); ex.Err != nil || ex.Result.Path != lib {
				t.Fatalf("populating the cache: %v\n%s", ex.Err, dump(ex))
			}
			tt.brk(t, base)
			if tt.child {
				got := childAnswers(t, childProcess(t, "", reliabilityChild{Env: env, Config: config, Names: []string{"cudart"}, Explain: true}, nil))
				if a := got["cudart"]; a.Path != lib {
					t.Fatalf("after the fault: %+v; want %s", a, lib)
				}
			} else if ex := newFinder(t, env, config).Explain(bg, DynamicLib, "cudart"); ex.Err != nil || ex.Result.Path != lib {
				t.Fatalf("after the fault: %v\n%s", ex.Err, dump(ex))
			}
			checkRebuilt(t, base, env, config, lib)
			if tt.after != nil {
				tt.after(t, base)
			}
		})
	}
}

// TestFaults_cacheDirTrust puts the cache where others than this user and root could write it, or
// what leads to it: it is not used at all, neither compiled code nor answers.
func TestFaults_cacheDirTrust(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give directories to another user")
	}
	tests := []struct {
		name   string
		base   func(t *testing.T, dir string) string // the cache dir, made under dir
		usable bool
	}{
		{"a private directory", func(t *testing.T, dir string) string { return filepath.Join(dir, "cache") }, true},
		{"not made yet, below a directory that does not exist", func(t *testing.T, dir string) string { return filepath.Join(dir, "a/b/cache") }, false},
		{"below a directory others can write", func(t *testing.T, dir string) string {
			filetree.Mkdir(t, dir, "w", 0o777)
			os.MkdirAll(filepath.Join(dir, "w/cache"), 0o700)
			return filepath.Join(dir, "w/cache")
		}, false},
		{"not made yet, below a directory others can write", func(t *testing.T, dir string) string {
			filetree.Mkdir(t, dir, "w", 0o777)
			return filepath.Join(dir, "w/cache")
		}, false},
		{"below a sticky directory others can write, as /tmp", func(t *testing.T, dir string) string {
			filetree.Mkdir(t, dir, "tmp", 0o777|os.ModeSticky)
			os.MkdirAll(filepath.Join(dir, "tmp/cache"), 0o700)
			return filepath.Join(dir, "tmp/cache")
		}, true},
		{"below a directory another user owns", func(t *testing.T, dir string) string {
			os.MkdirAll(filepath.Join(dir, "theirs/cache"), 0o700)
			os.Chown(filepath.Join(dir, "theirs"), 65534, 65534)
			return filepath.Join(dir, "theirs/cache")
		}, false},
		{"reached through a symlink in a directory others can write", func(t *testing.T, dir string) string {
			os.MkdirAll(filepath.Join(dir, "private/cache"), 0o700)
			filetree.Mkdir(t, dir, "w", 0o777)
			filetree.Symlink(t, filepath.Join(dir, "private"), filepath.Join(dir, "w/link"))
			return filepath.Join(dir, "w/link/cache")
		}, false},
		{"a symlink to a directory others can write", func(t *testing.T, dir string) string {
			filetree.Mkdir(t, dir, "w", 0o777)
			os.MkdirAll(filepath.Join(dir, "w/cache"), 0o700)
			filetree.Symlink(t, filepath.Join(dir, "w/cache"), filepath.Join(dir, "link"))
			return filepath.Join(dir, "link")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base(t, t.TempDir())
			f := newFinder(t, testEnv{"PATHFINDER_CACHE_DIR": base}, "")
			if got := f.Cache().Dir != "" && f.resultKey(DynamicLib, "cudart") != ""; got != tt.usable {
				t.Fatalf("cache dir %q, results on %v: used = %v, want %v", f.Cache().Dir, f.resultKey(DynamicLib, "cudart") != "", got, tt.usable)
			}
		})
	}
}

// checkRebuilt checks that a fresh Engine finds lib with the cache in base and that every entry
// there is well formed again.
func checkRebuilt(t *testing.T, base string, env testEnv, config, lib string) {
	t.Helper()
	if ex := newFinder(t, env, config).Explain(bg, DynamicLib, "cudart"); ex.Err != nil || ex.Result.Path != lib {
		t.Fatalf("the search after: %v\n%s", ex.Err, dump(ex))
	}
	entries := compiledEntries(t, base)
	if len(entries) == 0 {
		t.Fatal("nothing in the compilation cache after a successful search")
	}
	for _, p := range entries {
		if b, err := os.ReadFile(p); err != nil || !bytes.HasPrefix(b, []byte("WAZEVO")) || len(b) < 64 {
			t.Errorf("entry %s left broken (%d bytes, %v)", p, len(b), err)
		}
	}
}

// TestFaults_compilationCacheUnwritable gives the Engine a compilation cache it cannot write: the
// search must work all the same, only slower.
func TestFaults_compilationCacheUnwritable(t *testing.T) {
	// What another user runs must be readable by them: a world-readable directory, not t.TempDir().
	shared, err := os.MkdirTemp("", "pathfinder-reliability-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	os.Chmod(shared, 0o755)
	lib := filetree.Put(t, shared, "lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	config := tinyStep(t, shared, lib)

	file := filetree.Put(t, t.TempDir(), "file", []byte("not a directory"))
	tests := []struct {
		name  string
		base  func(t *testing.T) string // the cache directory
		after func(t *testing.T, f *Engine, base string)
		user  bool // search as another user, who cannot write the cache
	}{
		{name: "under a regular file", base: func(*testing.T) string { return filepath.Join(file, "cache") }},
		{name: "read-only (0500)", base: func(t *testing.T) string {
			if os.Geteuid() == 0 {
				t.Skip("root writes through mode 0500; the case of another user covers it")
			}
			base := t.TempDir()
			newFinder(t, testEnv{"PATHFINDER_TEST_OWN_ENGINE": "1", "PATHFINDER_CACHE_DIR": base}, "").engine() // creates the directories
			filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chmod(p, 0o500)
				}
				return nil
			})
			t.Cleanup(func() { os.Chmod(base, 0o700) })
			return base
		}},
		{name: "removed under a running Engine", base: func(t *testing.T) string { return t.TempDir() },
			after: func(t *testing.T, f *Engine, base string) {
				f.engine()
				if err := os.RemoveAll(base); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "read-only for another user", user: true, base: func(t *testing.T) string {
			base := filepath.Join(shared, "cache")
			// Another module populates it; this one is not in it, and must be compiled.
			other := otherStep(t)
			newFinder(t, testEnv{"PATHFINDER_TEST_OWN_ENGINE": "1", "PATHFINDER_CACHE_DIR": base}, "[search]\norder = [\"other\"]\n"+other).Explain(bg, DynamicLib, "cudart")
			filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
				if err == nil {
					os.Chmod(p, map[bool]os.FileMode{true: 0o755, false: 0o644}[d.IsDir()])
				}
				return nil
			})
			return base
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base(t)
			env := testEnv{"PATHFINDER_TEST_OWN_ENGINE": "1", "PATHFINDER_CACHE_DIR": base}
			if tt.user {
				if os.Geteuid() != 0 {
					t.Skip("needs root to run a child process as another user")
				}
				bin := filepath.Join(shared, "host.test")
				copyFile(t, os.Args[0], bin)
				os.Chmod(bin, 0o755)
				cmd := childProcess(t, bin, reliabilityChild{Env: env, Config: config, Names: []string{"cudart"}, Explain: true},
					&syscall.Credential{Uid: 65534, Gid: 65534})
				cmd.Dir = shared
				if a := childAnswers(t, cmd)["cudart"]; a.Path != lib {
					t.Fatalf("as another user: %+v; want %s", a, lib)
				}
				return
			}
			f := newFinder(t, env, config)
			if tt.after != nil {
				tt.after(t, f, base)
			}
			if ex := f.Explain(bg, DynamicLib, "cudart"); ex.Err != nil || ex.Result.Path != lib {
				t.Fatalf("%v\n%s", ex.Err, dump(ex))
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFaults_resultCache breaks the result cache entry of a find between two Finders. The next
// Engine must search afresh and give the right answer, and the one after that must be answered from
// the entry it rewrote.
func TestFaults_resultCache(t *testing.T) {
	dir := t.TempDir()
	lib := filetree.Put(t, dir, "lib/libcudart.so.13", anyLib(t)) // the tiny step proposes it for nvrtc too
	elsewhere := filetree.Put(t, t.TempDir(), "libcudart.so.13", elfLib(t, "libcudart.so.13"))
	// The config's path is part of the key: one file for every Engine, named by PATHFINDER_CONFIG.
	config := filetree.Put(t, t.TempDir(), "pathfinder.toml", []byte(tinyStep(t, "", lib)))
	entry := func(edit func(t *testing.T, f *Engine, data []byte) []byte) func(t *testing.T, f *Engine, base string) {
		return func(t *testing.T, f *Engine, base string) {
			p := f.results.Path(f.resultKey(DynamicLib, "cudart"))
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, edit(t, f, data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// forge writes a well-formed entry for cudart that answers elsewhere, with the given observations.
	forge := func(seen ...observe.Observation) func(t *testing.T, f *Engine, data []byte) []byte {
		return func(t *testing.T, f *Engine, _ []byte) []byte {
			b, _ := json.Marshal(resultcache.Entry{Version: resultcache.Version, Key: f.resultKey(DynamicLib, "cudart"),
				Library: &resultcache.Library{Name: "cudart", Kind: DynamicLib, Path: elsewhere, FoundVia: "tiny", Step: "tiny"}, Seen: seen})
			return b
		}
	}
	elsewhereSeen := func() observe.Observation {
		fi, err := os.Stat(elsewhere)
		return observe.Observation{Path: elsewhere, What: observe.Stat, Seen: observe.StatSeen(fi, err)}
	}
	rewrite := func(path string) func(t *testing.T, f *Engine, base string) {
		return func(t *testing.T, f *Engine, base string) { rewriteEntry(t, f, path, "") }
	}
	shadow := filetree.Put(t, dir, "lib/shadow", []byte("root:$6$secret:19000:0:99999:7:::\n")) // in the granted directory, no library
	tests := []struct {
		name     string
		brk      func(t *testing.T, f *Engine, base string)
		uncached bool // nothing can be cached: the Engine after searches too
	}{
		{name: "truncated", brk: entry(func(t *testing.T, _ *Engine, b []byte) []byte { return b[:len(b)/2] })},
		{name: "empty", brk: entry(func(t *testing.T, _ *Engine, b []byte) []byte { return nil })},
		{name: "garbage", brk: entry(func(t *testing.T, _ *Engine, b []byte) []byte { return bytes.Repeat([]byte{0xff, '{'}, len(b)) })},
		{name: "another version", brk: entry(func(t *testing.T, _ *Engine, b []byte) []byte {
			return bytes.Replace(b, []byte(`"version":1,`), []byte(`"version":2,`), 1)
		})},
		{name: "both a library and an error", brk: entry(func(t *testing.T, _ *Engine, b []byte) []byte {
			return bytes.Replace(b, []byte(`"seen":`), []byte(`"error":{"looked":[],"attempts":[]},"seen":`), 1)
		})},
		{name: "another key's entry copied over", brk: func(t *testing.T, f *Engine, base string) {
			if _, err := f.Find(bg, "nvrtc"); err != nil {
				t.Fatal(err)
			}
			copyFile(t, f.results.Path(f.resultKey(DynamicLib, "nvrtc")), f.results.Path(f.resultKey(DynamicLib, "cudart")))
		}},
		// A flipped bit that leaves the JSON well formed: the path it names was never observed.
		{name: "a bit flip in the library path", brk: entry(func(t *testing.T, _ *Engine, b []byte) []byte {
			i := bytes.Index(b, []byte("libcudart.so.13\",\"found_via"))
			if i < 0 {
				t.Fatalf("no path in %s", b)
			}
			b[i+3] ^= 0x20 // libCudart.so.13
			return b
		})},
		{name: "a forged entry without observations", brk: entry(forge())},
		// Before, both answered from the cache: an entry is re-checked as a fresh candidate is.
		{name: "rewritten, checksum and all, to answer a library outside every granted directory", brk: rewrite(elsewhere)},
		{name: "rewritten, checksum and all, to answer a file that is no library (as /etc/shadow)", brk: rewrite(shadow)},
		// Whoever can write the cache can make find answer what they like: a directory that others
		// than its owner may write is not to be used, as a plugin file there would not be.
		{name: "a directory others can write", uncached: true, brk: func(t *testing.T, f *Engine, base string) {
			entry(forge(elsewhereSeen()))(t, f, base)
			if err := os.Chmod(base, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "unwritable: results is a file", uncached: true, brk: func(t *testing.T, f *Engine, base string) {
			os.RemoveAll(filepath.Join(base, "results"))
			filetree.Put(t, base, "results", []byte("not a directory"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			env := testEnv{"PATHFINDER_CACHE_DIR": base, "PATHFINDER_CONFIG": config}
			find := func(when string, wantSearches int64) {
				t.Helper()
				f := newFinder(t, env, "")
				got, err := f.Find(bg, "cudart")
				if err != nil || got.Path != lib {
					t.Fatalf("%s: %+v, %v; want %s", when, got, err, lib)
				}
				if n := f.searches.Load(); n != wantSearches {
					t.Fatalf("%s: %d searches, want %d (0: answered from the cache)", when, n, wantSearches)
				}
			}
			find("populating the cache", 1)
			tt.brk(t, newFinder(t, env, ""), base)
			find("after the fault", 1)
			if tt.uncached {
				find("the next Engine", 1)
			} else {
				find("the next Engine", 0)
			}
		})
	}
}

// TestFaults_catalogCache breaks the cached catalog between two Finders: the next one must read the
// packs again, not what the file says. A vendor's pack is read beside the builtin one, whose catalog
// alone is in the binary and never cached.
func TestFaults_catalogCache(t *testing.T) {
	edit := func(edit func(b []byte, hash string) []byte) func(t *testing.T, p string) {
		return func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			hash := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "catalog-"), ".bin")
			if e := edit(b, hash); !bytes.Equal(e, b) {
				os.WriteFile(p, e, 0o644)
			} else {
				t.Fatal("the edit changed nothing")
			}
		}
	}
	tests := []struct {
		name string
		brk  func(t *testing.T, p string)
	}{
		{"truncated", edit(func(b []byte, _ string) []byte { return b[:len(b)/2] })},
		{"garbage", edit(func(b []byte, _ string) []byte { return bytes.Repeat([]byte("\x00garbage"), 100) })},
		{"another packs' catalog copied over", edit(func(b []byte, hash string) []byte {
			return bytes.Replace(b, []byte(hash), []byte(strings.Repeat("0", len(hash))), 1)
		})},
		// Well-formed, with the right hash, and wrong: the packs say libcudart.so.13.
		{"an edited soname", edit(func(b []byte, _ string) []byte {
			return bytes.Replace(b, []byte("libcudart.so.13"), []byte("libcudarT.so.13"), 1)
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			env := testEnv{"PATHFINDER_CACHE_DIR": base, "PATHFINDER_PACKS": filetree.Put(t, t.TempDir(), "vendor.toml", pack("vendorlib", `site_packages_linux = ["v/lib"]`))}
			want := newFinder(t, env, "").FileNames(DynamicLib, "cudart")
			files, _ := filepath.Glob(filepath.Join(base, "catalog-*.bin"))
			if len(files) != 1 || len(want) == 0 {
				t.Fatalf("catalog cache files %v, cudart's names %v", files, want)
			}
			tt.brk(t, files[0])
			f := newFinder(t, env, "")
			if got := f.FileNames(DynamicLib, "cudart"); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("cudart's file names %v after the fault, want %v", got, want)
			}
			if n := len(f.Libraries(DynamicLib)); n < 51 {
				t.Fatalf("%d dynamic libraries after the fault", n)
			}
			// Rewritten: a third Engine reads the same from it.
			if got := newFinder(t, env, "").FileNames(DynamicLib, "cudart"); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("cudart's file names %v from the rewritten cache, want %v", got, want)
			}
		})
	}
}

// TestFaults_configOrPackDeleted deletes a config file or a descriptor pack between two Finders (two
// runs): what was required is an error that names it; what was optional is simply gone, and no
// answer cached while it was there is used. The first Engine searches with the tiny step.
func TestFaults_configOrPackDeleted(t *testing.T) {
	site := t.TempDir()
	so := anyLib(t) // stands for both reliab and cudart
	inSite := filetree.Put(t, site, "reliab/lib/libreliab.so.1", so)
	wheelsLib := filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", so)
	tiny := []byte(tinyStep(t, "", inSite)) // proposes inSite whatever the name
	packLib := pack("reliab", `site_packages_linux = ["reliab/lib"]`)

	tests := []struct {
		name  string
		setup func(t *testing.T, env testEnv) (remove string) // what to delete
		lib   string
		after string // the second Engine's answer, or ""
		err   string // or New's error says this
		is    error  // or the search's error is this
	}{
		{name: "a pack named by $PATHFINDER_PACKS", lib: "reliab", err: "(" + inspect.PackFromEnv + "): no such file or directory",
			setup: func(t *testing.T, env testEnv) string {
				env["PATHFINDER_PACKS"] = filetree.Put(t, t.TempDir(), "reliab.toml", packLib)
				return env["PATHFINDER_PACKS"]
			}},
		{name: "a pack in a directory named by $PATHFINDER_PACKS", lib: "reliab", is: ErrUnknown,
			setup: func(t *testing.T, env testEnv) string {
				env["PATHFINDER_PACKS"] = t.TempDir()
				return filetree.Put(t, env["PATHFINDER_PACKS"], "reliab.toml", packLib)
			}},
		{name: "a pack in the user's packs.d", lib: "reliab", is: ErrUnknown,
			setup: func(t *testing.T, env testEnv) string {
				env["XDG_CONFIG_HOME"] = t.TempDir()
				return filetree.Put(t, env["XDG_CONFIG_HOME"], "pathfinder/packs.d/reliab.toml", packLib)
			}},
		{name: "the file named by $PATHFINDER_CONFIG", lib: "cudart", err: "no such file or directory",
			setup: func(t *testing.T, env testEnv) string {
				delete(env, "PATHFINDER_CONFIG")
				env["PATHFINDER_CONFIG"] = filetree.Put(t, t.TempDir(), "p.toml", tiny)
				return env["PATHFINDER_CONFIG"]
			}},
		// The default order again: the wheels step's answer, not the tiny step's cached one.
		{name: "the user's config", lib: "cudart", after: wheelsLib,
			setup: func(t *testing.T, env testEnv) string {
				delete(env, "PATHFINDER_CONFIG")
				env["XDG_CONFIG_HOME"] = t.TempDir()
				return filetree.Put(t, env["XDG_CONFIG_HOME"], "pathfinder/pathfinder.toml", tiny)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_CACHE_DIR": sharedCacheDir,
				"PATHFINDER_CONFIG": filetree.Put(t, t.TempDir(), "tiny.toml", tiny)}
			remove := tt.setup(t, env)
			if lib, err := newFinder(t, env, "").Find(bg, tt.lib); err != nil || lib.Path != inSite {
				t.Fatalf("before: %+v, %v; want %s", lib, err, inSite)
			}
			if err := os.Remove(remove); err != nil {
				t.Fatal(err)
			}
			f, err := New(Options{LookupEnv: env.lookup, SystemConfigDir: t.TempDir()})
			if tt.err != "" {
				if err == nil || strings.HasPrefix(err.Error(), "pathfinder: ") || !strings.Contains(err.Error(), remove) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("New after deleting %s: %v; want an error naming it, saying %q", remove, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lib, err := f.Find(bg, tt.lib)
			switch {
			case tt.is != nil && !errors.Is(err, tt.is):
				t.Fatalf("after: %+v, %v; want %v", lib, err, tt.is)
			case tt.is == nil && (err != nil || lib.Path != tt.after):
				t.Fatalf("after: %+v, %v; want %s", lib, err, tt.after)
			}
		})
	}
}

// TestFaults_twoProcesses has two processes populate one empty cache directory at once: both
// compile the tiny step's module, both search every name and write every result. Both must answer
// right, and a third Engine must then answer every name from the cache, from well-formed entries.
func TestFaults_twoProcesses(t *testing.T) {
	site, want := reliabilitySite(t)
	tinyLib := filetree.Put(t, t.TempDir(), "lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	want["cudart"] = tinyLib
	config := filetree.Put(t, t.TempDir(), "pathfinder.toml", []byte(strings.Replace(tinyStep(t, "", tinyLib),
		"[search]\norder = [\"tiny\"]\n", "[library.cudart]\norder = [\"tiny\", \"wheels\"]\n", 1)))
	names := append(append([]string(nil), reliabilityFound...), reliabilityMissing...)

	// The builtin module compiles in most of a minute under -race: the empty cache gets the shared
	// cache's compiled modules (hard links; wazero replaces files, never writes into them).
	newFinder(t, nil, "").Explain(bg, DynamicLib, "cudart") // the shared cache has the builtin module
	base := t.TempDir()
	for _, p := range compilationCacheFiles(t, sharedCacheDir) {
		rel, _ := filepath.Rel(sharedCacheDir, p)
		os.MkdirAll(filepath.Join(base, filepath.Dir(rel)), 0o700)
		if err := os.Link(p, filepath.Join(base, rel)); err != nil {
			t.Fatal(err)
		}
	}

	env := testEnv{"PATHFINDER_TEST_OWN_ENGINE": "1", "PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_CACHE_DIR": base, "PATHFINDER_CONFIG": config}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		cmd := childProcess(t, "", reliabilityChild{Env: env, Names: names}, nil)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, lastLines(outs[i].String(), 40))
		}
		got := parseAnswers(t, outs[i].String())
		for _, name := range names {
			a := got[name]
			if w, found := want[name]; found && a.Path != w || !found && !strings.Contains(a.Err, "not found") {
				t.Errorf("process %d, %s: %+v; want %q", i, name, a, w)
			}
		}
	}

	f := newFinder(t, env, "")
	for _, name := range names {
		lib, err := f.Find(bg, name)
		if w, found := want[name]; found && (err != nil || lib.Path != w) || !found && !errors.Is(err, ErrNotFound) {
			t.Errorf("after, %s: %+v, %v; want %q", name, lib, err, w)
		}
	}
	if n := f.searches.Load(); n != 0 {
		t.Errorf("%d of %d names searched again: the cache the two processes wrote is not usable", n, len(names))
	}
	filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "tmp") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
	checkRebuilt(t, base, env, "", tinyLib)
}
