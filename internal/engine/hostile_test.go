//go:build linux

package engine

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakeelf"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
	"github.com/pathfinder-dev/pathfinder/internal/wasm"
)

// The hostile plugins live in ../../testdata/hostile: a Go module whose searches misbehave one way each
// (built once per test binary) and tiny hand-assembled modules (committed; hostileModules is their
// source). Every case runs as the first step of two; the second, the builtin wheels step, must still
// find cudart, twice, with the same Engine.

// hostileDirs is one case's file system: root is granted to the hostile step, outside is not, and
// site is the site-packages directory the wheels step finds cudart in.
type hostileDirs struct {
	root, outside, site string
	want                string // the library the wheels step finds
}

type hostileCase struct {
	name   string
	plugin string // a module in testdata/hostile; "" for the Go plugin, which runs the search named step
	// loopsIn is the part of a call ("instantiating", "searching": wasm.Engine.Entering's words) the
	// step loops in forever, to be stopped by its deadline on a hostileClock; "" for a step that ends.
	loopsIn string
	step    string // the step's name in the config
	memory  string
	caps    []string
	setup   func(t *testing.T, d hostileDirs)
	options func(d hostileDirs) map[string]string
	failed  string // the step fails and its detail says this
	refused string // the step proposes candidates, the host refuses all, the first for this reason
	check   func(t *testing.T, d hostileDirs, ex *search.Explanation)
}

func TestHostile_steps(t *testing.T) {
	goPlugin := hostileGoPlugin(t)
	foreign := map[string]elf.Machine{"arm64": elf.EM_X86_64}[runtime.GOARCH]
	if foreign == 0 {
		foreign = elf.EM_AARCH64
	}
	candidates := func(paths func(d hostileDirs) []string) func(d hostileDirs) map[string]string {
		return func(d hostileDirs) map[string]string { return map[string]string{"paths": hostileQuote(paths(d)...)} }
	}
	lib := func(d hostileDirs) []string { return []string{filepath.Join(d.root, "lib/libcudart.so.13")} }
	putLib := func(data func(t *testing.T) []byte) func(t *testing.T, d hostileDirs) {
		return func(t *testing.T, d hostileDirs) { filetree.Put(t, d.root, "lib/libcudart.so.13", data(t)) }
	}

	tests := []hostileCase{
		// Traps, loops and memory.
		{name: "go panic", step: "hostile-panic",
			failed: `plugin "hostile-panic": trapped while searching: panic: hostile: deliberate panic in search`},
		{name: "exit", step: "hostile-exit", failed: `plugin "hostile-exit": exited with code 3 while searching`},
		{name: "unreachable", plugin: "unreachable.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": trapped while searching: wasm error: unreachable`},
		{name: "trap in _initialize", plugin: "initialize-trap.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": trapped while instantiating`},
		// Before: 10 s per library per run, whatever the timeout said.
		{name: "infinite loop in _initialize", plugin: "initialize-loop.wasm", step: "hostile-x", loopsIn: "instantiating",
			failed: `plugin "hostile-x": timed out while instantiating`},
		// Before: "canceled while searching", wazero's code for a canceled call.
		{name: "proc_exit(-1)", plugin: "exit-minus-one.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": exited with code -1 while searching`},
		{name: "infinite loop in go", step: "hostile-loop", loopsIn: "searching",
			failed: `plugin "hostile-loop": timed out while searching`},
		{name: "infinite loop in search", plugin: "search-loop.wasm", step: "hostile-x", loopsIn: "searching",
			failed: `plugin "hostile-x": timed out while searching`},
		{name: "infinite loop in abi version", plugin: "version-loop.wasm", step: "hostile-x", loopsIn: "asking the abi version",
			failed: `plugin "hostile-x": timed out while asking the abi version`},
		{name: "allocate until the memory cap", step: "hostile-oom", memory: "8MiB",
			failed: `plugin "hostile-oom": trapped while searching: fatal error: out of memory`},
		{name: "memory over the cap", plugin: "memory-over-cap.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": not a valid wasm module`},

		// The ABI.
		{name: "older abi version", plugin: "abi-version-1.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": plugin abi version mismatch: host 2, plugin 1: the plugin was built for an older pathfinder: rebuild it with this pathfinder's SDK (abi version 2, docs/abi.md)`,
			check: func(t *testing.T, _ hostileDirs, ex *search.Explanation) {
				if d, want := ex.Steps[0].Detail, `plugin "hostile-x": `+ErrABIMismatch.Error(); !strings.HasPrefix(d, want) {
					t.Errorf("detail %q does not start with %q", d, want)
				}
			}},
		{name: "newer abi version", plugin: "abi-version-3.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": plugin abi version mismatch: host 2, plugin 3: the plugin is newer than this pathfinder: upgrade pathfinder, or use a build of the plugin for abi version 2`},
		{name: "missing export", plugin: "missing-search.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": missing export "pathfinder_search"`},
		{name: "no memory", plugin: "no-memory.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": missing export "memory"`},
		{name: "built as a command", plugin: "command.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": built as a command (it exports _start, not _initialize): a plugin is a reactor; in Go, build it with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o NAME.wasm .`},
		{name: "unknown import", plugin: "unknown-import.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": trapped while instantiating: "hostile_unknown" is not exported in module "pathfinder"`},
		{name: "not a wasm module", plugin: "not-wasm.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": not a valid wasm module`},

		// The response.
		{name: "garbage response", plugin: "garbage.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": unreadable response: not JSON`},
		{name: "response outside memory", plugin: "response-out-of-bounds.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": response at 0xfffffff0+256 is outside its memory`},
		{name: "response past the end of memory", plugin: "response-past-end.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": response at 0xfde8+1000 is outside its memory`},
		{name: "huge response", plugin: "response-huge.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": response of 16777217 bytes is over the 16777216-byte limit`},
		{name: "allocator outside memory", plugin: "alloc-out-of-bounds.wasm", step: "hostile-x",
			failed: `plugin "hostile-x": allocator returned 0xffff0000, outside its memory`},
		// Before: each candidate checked (and kept in the trace and the result cache): 10⁶ of them
		// took 7.8 s, 590 MB and an 85 MB cache entry.
		// The decoder's cost at a million candidates is Test_decodeResponse's (internal/candidate):
		// here, that a plugin's answer over the bound fails its step unchecked.
		{name: "20,000 candidates", step: "hostile-many", memory: "512MiB",
			options: func(hostileDirs) map[string]string { return map[string]string{"n": "20000"} },
			failed:  `plugin "hostile-many": 20000 candidates, over the 1000 a step may propose: none checked`},
		{name: "raw invalid utf-8 in the response", plugin: "invalid-utf8.wasm", step: "hostile-x",
			refused: "outside every directory granted to the step", check: hostileValidUTF8},
		{name: "log flood", step: "hostile-log", check: hostileLogBounded},
		// 356,000 lines in 2 s before the host's own lines about a plugin counted under its bound.
		{name: "system_resolve in a loop", step: "hostile-resolve-flood", caps: []string{abi.CapabilitySystemResolve}, memory: "256MiB",
			options: func(hostileDirs) map[string]string { return map[string]string{"n": "20000"} },
			check:   hostileLogBounded},

		// Text a terminal would act on.
		{name: "a newline in a candidate's path", step: "hostile-candidates",
			setup: func(t *testing.T, d hostileDirs) {
				filetree.Put(t, d.root, "a\n/opt/evil/libcudart.so.13", elfLib(t, "libcudart.so.13"))
			},
			options: candidates(func(d hostileDirs) []string { return []string{d.root + "/a\n/opt/evil/libcudart.so.13"} }),
			refused: `path contains a control character (a newline, an escape, a bidirectional override)`,
			check:   hostilePrintable},
		{name: "terminal escapes in everything it says", step: "hostile-text",
			setup:   putLib(hostileRealLib),
			options: candidates(func(d hostileDirs) []string { return []string{d.root + "/lib/\x1b[2J/../libcudart.so.13"} }),
			refused: "path contains a control character", check: hostileIgnoredGranted},
		{name: "terminal escapes in its error", step: "hostile-error-text",
			failed: `plugin "hostile-error-text": \x1b[2J\x1b[H\x1b]0;pwned\x07hidden\r\u202eevil\n→ /opt/evil`, check: hostilePrintable},
		{name: "terminal escapes in its panic", step: "hostile-panic-text",
			failed: `plugin "hostile-panic-text": trapped while searching: panic: \x1b[2J`, check: hostilePrintable},

		// Candidates.
		{name: "outside the granted roots", step: "hostile-candidates",
			setup: func(t *testing.T, d hostileDirs) {
				filetree.Put(t, d.outside, "libcudart.so.13", elfLib(t, "libcudart.so.13"))
			},
			options: candidates(func(d hostileDirs) []string { return []string{filepath.Join(d.outside, "libcudart.so.13")} }),
			refused: "outside every directory granted to the step"},
		{name: "dot dot", step: "hostile-candidates",
			setup: func(t *testing.T, d hostileDirs) {
				filetree.Put(t, d.outside, "libcudart.so.13", elfLib(t, "libcudart.so.13"))
			},
			options: candidates(func(d hostileDirs) []string { return []string{d.root + "/../outside/libcudart.so.13"} }),
			refused: "not a clean path"},
		{name: "relative", step: "hostile-candidates", setup: putLib(hostileRealLib),
			options: candidates(func(hostileDirs) []string { return []string{"lib/libcudart.so.13"} }),
			refused: "not an absolute path"},
		{name: "empty", step: "hostile-candidates",
			options: candidates(func(hostileDirs) []string { return []string{""} }),
			refused: "empty path"},
		{name: "nul byte", step: "hostile-candidates", setup: putLib(hostileRealLib),
			options: candidates(func(d hostileDirs) []string { return []string{lib(d)[0] + "\x00.txt"} }),
			refused: "path contains a NUL byte"},
		{name: "very long", step: "hostile-candidates",
			options: candidates(func(d hostileDirs) []string {
				return []string{d.root + strings.Repeat("/a", 3000) + "/libcudart.so.13"}
			}),
			refused: "path longer than 4096 bytes"},
		{name: "very long name", step: "hostile-candidates",
			options: candidates(func(d hostileDirs) []string { return []string{d.root + "/" + strings.Repeat("a", 300)} }),
			refused: "file name too long"},
		{name: "invalid utf-8", step: "hostile-candidates",
			setup: func(t *testing.T, d hostileDirs) {
				filetree.Put(t, d.root, "lib/lib\xffcudart.so.13", elfLib(t, "libcudart.so.13"))
			},
			options: candidates(func(d hostileDirs) []string { return []string{d.root + "/lib/lib\xffcudart.so.13"} }),
			refused: "no such file or directory", check: hostileValidUTF8},
		{name: "missing file", step: "hostile-candidates", options: candidates(lib),
			refused: "no such file or directory"},
		{name: "not elf", step: "hostile-candidates", options: candidates(lib),
			setup:   putLib(func(*testing.T) []byte { return []byte("INPUT(libcudart.so.13.0.1)\n") }),
			refused: "not an ELF file: bad magic number"},
		{name: "empty file", step: "hostile-candidates", options: candidates(lib),
			setup:   putLib(func(*testing.T) []byte { return nil }),
			refused: "not an ELF file"},
		{name: "wrong machine", step: "hostile-candidates", options: candidates(lib),
			setup:   putLib(func(*testing.T) []byte { return fakeelf.Header(elf.ELFCLASS64, foreign, elf.ET_DYN) }),
			refused: foreign.String()}, // "built for EM_AARCH64, not amd64"
		{name: "32-bit", step: "hostile-candidates", options: candidates(lib),
			setup:   putLib(func(*testing.T) []byte { return fakeelf.Header(elf.ELFCLASS32, elf.EM_386, elf.ET_DYN) }),
			refused: "ELFCLASS32"},
		{name: "executable", step: "hostile-candidates", options: candidates(lib),
			setup: putLib(func(*testing.T) []byte {
				return fakeelf.Header(elf.ELFCLASS64, binfmt.MachineOf(runtime.GOARCH), elf.ET_EXEC)
			}),
			refused: "ET_EXEC"},
		{name: "stubs", step: "hostile-candidates",
			setup: func(t *testing.T, d hostileDirs) {
				filetree.Put(t, d.root, "lib/stubs/libcudart.so.13", elfLib(t, "libcudart.so.13"))
			},
			options: candidates(func(d hostileDirs) []string { return []string{filepath.Join(d.root, "lib/stubs/libcudart.so.13")} }),
			refused: "a stubs/ library"},
		{name: "directory", step: "hostile-candidates", options: candidates(lib),
			setup: func(t *testing.T, d hostileDirs) {
				if err := os.MkdirAll(lib(d)[0], 0o755); err != nil {
					t.Fatal(err)
				}
			},
			refused: "not a regular file (d"},
		{name: "fifo", step: "hostile-candidates", options: candidates(lib),
			setup: func(t *testing.T, d hostileDirs) {
				os.MkdirAll(filepath.Join(d.root, "lib"), 0o755)
				if err := syscall.Mkfifo(lib(d)[0], 0o644); err != nil {
					t.Fatal(err)
				}
			},
			refused: "not a regular file (p"},
		// Links out of the root are followed, to be checked where they lead (issue 17); these lead
		// nowhere a library could be.
		{name: "a link loop", step: "hostile-candidates", options: candidates(lib),
			setup:   hostileLink(func(*testing.T, hostileDirs) string { return "libcudart.so.13" }),
			refused: "more than 40 links on the way (a loop?)"},
		{name: "a link to /dev/zero", step: "hostile-candidates", options: candidates(lib),
			setup:   hostileLink(func(*testing.T, hostileDirs) string { return "/dev/zero" }),
			refused: "leads into /proc, /sys or /dev, which no link reaches"},
		{name: "a link to a FIFO outside the root", step: "hostile-candidates", options: candidates(lib),
			setup: hostileLink(func(t *testing.T, d hostileDirs) string {
				if err := syscall.Mkfifo(filepath.Join(d.outside, "fifo"), 0o644); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(d.outside, "fifo")
			}),
			refused: "not a regular file (p"},
		{name: "a chain of 60 links", step: "hostile-candidates", options: candidates(lib),
			setup: hostileLink(func(t *testing.T, d hostileDirs) string {
				filetree.Put(t, d.outside, "c60", elfLib(t, "libcudart.so.13"))
				for i := range 60 {
					filetree.Symlink(t, fmt.Sprintf("c%d", i+1), filepath.Join(d.outside, fmt.Sprintf("c%d", i)))
				}
				return filepath.Join(d.outside, "c0")
			}),
			refused: "more than 40 links on the way"},
		{name: "a link out to a stub", step: "hostile-candidates", options: candidates(lib),
			setup: hostileLink(func(t *testing.T, d hostileDirs) string {
				return filetree.Put(t, d.outside, "stubs/libcudart.so", elfLib(t, "libcudart.so.13"))
			}),
			refused: "stubs/libcudart.so: a stubs/ library"},

		// The sandbox.
		{name: "read outside the roots", step: "hostile-read", setup: hostileSecrets,
			options: func(d hostileDirs) map[string]string {
				return map[string]string{
					"paths": hostileQuote(
						filepath.Join(d.root, "inside.txt"), // the control: this one must work
						d.root+"/../outside/secret.txt",
						d.root+"/sub/../../outside/secret.txt",
						filepath.Join(d.outside, "secret.txt"),
						filepath.Join(d.root, "link-abs"),
						filepath.Join(d.root, "link-rel"),
						filepath.Join(d.root, "link-dir/secret.txt"),
						filepath.Join(d.root, "sub/link-up"),
						"../outside/secret.txt",
						"/etc/passwd",
						"/proc/self/environ",
					),
					"write": hostileQuote(filepath.Join(d.root, "pwned.txt"), filepath.Join(d.outside, "pwned.txt")),
				}
			},
			refused: "not an absolute path", // the control's content, proposed as a path
			check:   hostileCheckConfined},
		{name: "env not granted", step: "hostile-env",
			options: func(hostileDirs) map[string]string {
				return map[string]string{"vars": "HOSTILE_GRANTED HOSTILE_SECRET PATHFINDER_SITE_PACKAGES PATH HOME"}
			},
			refused: "not an absolute path", // the granted variable's value, proposed as a path
			check:   hostileCheckEnv},
	}

	// One engine and one site-packages directory for every case: the wheels step then has the same
	// grants in every case, and the engine keeps a few idle instances for it instead of one per case.
	suite := newHostileSuite(t)
	site := t.TempDir()
	want := filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A looping case sets the shared engine's clock: it runs alone, before the parallel
			// cases start.
			if tc.loopsIn == "" {
				t.Parallel()
			}
			base := t.TempDir()
			d := hostileDirs{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside"), site: site, want: want}
			for _, dir := range []string{d.root, d.outside} {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.setup != nil {
				tc.setup(t, d)
			}
			source := goPlugin
			if tc.plugin != "" {
				source = hostileCopy(t, tc.plugin)
			}
			var opts map[string]string
			if tc.options != nil {
				opts = tc.options(d)
			}
			timeout := 30 * time.Second // generous: a step that ends is never near it
			if tc.loopsIn != "" {
				timeout = time.Hour // so long that only the test's clock, never the machine's speed, stops the step
			}
			var h hooks
			if tc.loopsIn != "" {
				clock := &hostileClock{t: t, step: tc.step, loopsIn: tc.loopsIn, timeout: timeout}
				suite.engine.AfterFunc, suite.engine.Entering, h.beforeStep = clock.afterFunc, clock.entering, clock.beforeStep
				t.Cleanup(func() { suite.engine.AfterFunc, suite.engine.Entering = nil, nil })
			}
			f := suite.finder(t, testEnv{
				"PATHFINDER_SITE_PACKAGES": d.site,
				"HOSTILE_ROOT":             d.root,
				"HOSTILE_GRANTED":          "granted-ok",
				"HOSTILE_SECRET":           "env-secret-91c2",
			}, hostileConfig([]string{tc.step, "wheels"}, hostileStep{tc.step, source, tc.memory, timeout.String(), opts, tc.caps}), h)

			for call := 1; call <= 2; call++ {
				ex := f.Explain(bg, DynamicLib, "cudart")
				if !hostileCheck(t, call, tc, d, ex) {
					return
				}
			}
			lib, err := f.Find(bg, "cudart")
			if err != nil || lib.Path != d.want || lib.Step != "wheels" {
				t.Fatalf("Find after the hostile step: %+v, %v; want %s from wheels", lib, err, d.want)
			}
		})
	}
}

// hostileCheck checks one search: the hostile step failed or found nothing, for the expected reason,
// and the wheels step found cudart after it.
func hostileCheck(t *testing.T, call int, tc hostileCase, d hostileDirs, ex *search.Explanation) bool {
	t.Helper()
	if ex.Err != nil || ex.Result == nil || ex.Result.Path != d.want || ex.Result.Step != "wheels" {
		t.Errorf("call %d: %v, result %+v; want %s from wheels", call, ex.Err, ex.Result, d.want)
	}
	if len(ex.Steps) != 2 || ex.Steps[0].Step != tc.step {
		t.Fatalf("call %d: steps %+v; want %s then wheels", call, ex.Steps, tc.step)
	}
	st := ex.Steps[0]
	if call == 1 {
		why := st.Detail
		if len(st.Candidates) > 0 {
			why = st.Candidates[0].Refused
		}
		t.Logf("%s: %s", st.Outcome, why) // what explain says, for go test -v
	}
	switch {
	case tc.failed != "":
		if st.Outcome != "failed" || !strings.Contains(st.Detail, tc.failed) || strings.Contains(st.Detail, "\n") {
			t.Errorf("call %d: outcome %s, detail %q; want failed, one line saying %q", call, st.Outcome, st.Detail, tc.failed)
		}
		if !strings.HasPrefix(st.Detail, fmt.Sprintf("plugin %q: ", st.Step)) {
			t.Errorf("call %d: detail %q does not name the plugin", call, st.Detail)
		}
	case tc.refused != "":
		if st.Outcome != "nothing" || len(st.Candidates) == 0 || !strings.Contains(st.Candidates[0].Refused, tc.refused) {
			t.Errorf("call %d: outcome %s, candidates %+v; want nothing, the first refused as %q", call, st.Outcome, st.Candidates, tc.refused)
		}
		for _, c := range st.Candidates {
			if c.Taken || c.Refused == "" {
				t.Errorf("call %d: candidate %q taken", call, c.Path)
			}
		}
	}
	if tc.check != nil {
		tc.check(t, d, ex)
	}
	if t.Failed() {
		for _, st := range ex.Steps {
			t.Logf("%s: %s %s candidates=%+v tried=%+v log=%d lines", st.Step, st.Outcome, st.Detail, st.Candidates, st.Tried, len(st.Log))
		}
		return false
	}
	return true
}

// hostileClock is the engine's clock while a looping case runs: it expires the hostile step's call
// as the call enters the part the step loops in, and checks that every deadline the step's calls
// start is what is left of the step's own timeout (the whole step's bound: instantiating once had
// 10 s whatever the timeout said). The other step's calls run on the real clock.
type hostileClock struct {
	t             *testing.T
	step, loopsIn string
	timeout       time.Duration
	running       string // the step running: the Engine's beforeStep hook
	expire        func() // the hostile step's latest deadline
}

func (c *hostileClock) beforeStep(step string) { c.running, c.expire = step, nil }

func (c *hostileClock) afterFunc(d time.Duration, expire func()) func() bool {
	if c.running != c.step {
		return time.AfterFunc(d, expire).Stop
	}
	if d > c.timeout || d < c.timeout-time.Minute { // what the step spent before the call is its own
		c.t.Errorf("step %s: a deadline started for %v; want what is left of its timeout, %v", c.step, d, c.timeout)
	}
	c.expire = expire
	return func() bool { return false } // it never fires by itself
}

func (c *hostileClock) entering(doing string) {
	if c.running != c.step || doing != c.loopsIn {
		return
	}
	if c.expire == nil {
		c.t.Errorf("step %s: %s with no deadline started", c.step, doing)
		return
	}
	// From another goroutine, as a timer fires: the part has begun, and as it loops forever only the
	// deadline ends it, whenever that lands.
	go c.expire()
}

// TestHostile_moduleKeepsServing runs steps that panic, run out of memory and loop, all from one
// compiled module, from several goroutines at once: each fails alone, and a well-behaved step of the
// same module finds the library after them every time.
func TestHostile_moduleKeepsServing(t *testing.T) {
	goPlugin := hostileGoPlugin(t)
	root := t.TempDir()
	want := filetree.Put(t, root, "lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	failing := []struct{ step, timeout, why string }{
		{"hostile-panic", "30s", "panic: hostile"},
		{"hostile-oom", "30s", "fatal error: out of memory"},
		{"hostile-loop", "300ms", "timed out while"}, // under this load, sometimes while instantiating
	}
	var order []string
	var steps []hostileStep
	for _, s := range failing {
		order = append(order, s.step)
		steps = append(steps, hostileStep{name: s.step, source: goPlugin, memory: "8MiB", timeout: s.timeout})
	}
	steps = append(steps, hostileStep{name: "hostile-good", source: goPlugin, memory: "8MiB", timeout: "30s",
		options: map[string]string{"paths": hostileQuote(want)}})
	f := newFinder(t, testEnv{"HOSTILE_ROOT": root}, hostileConfig(append(order, "hostile-good"), steps...))

	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2; i++ {
				ex := f.Explain(bg, DynamicLib, "cudart")
				if ex.Err != nil || ex.Result == nil || ex.Result.Path != want || ex.Result.Step != "hostile-good" || len(ex.Steps) != len(failing)+1 {
					t.Errorf("search %d: %v, %+v; want %s from hostile-good", i, ex.Err, ex.Result, want)
					return
				}
				for j, st := range ex.Steps[:len(failing)] {
					// Every step names itself, though all share one compiled module.
					named := fmt.Sprintf("plugin %q: ", failing[j].step)
					if st.Step != failing[j].step || st.Outcome != "failed" || !strings.Contains(st.Detail, named) || !strings.Contains(st.Detail, failing[j].why) {
						t.Errorf("search %d: step %s: %s %s; want %s failed, saying %q", i, st.Step, st.Outcome, st.Detail, failing[j].step, failing[j].why)
					}
				}
			}
		}()
	}
	wg.Wait()
	if lib, err := f.Find(bg, "cudart"); err != nil || lib.Path != want {
		t.Fatalf("Find: %+v, %v; want %s", lib, err, want)
	}
}

// TestHostile_modulesMatchSource proves the committed tiny modules are what hostileModules
// assembles. PATHFINDER_HOSTILE_UPDATE=1 rewrites them.
func TestHostile_modulesMatchSource(t *testing.T) {
	update := os.Getenv("PATHFINDER_HOSTILE_UPDATE") == "1"
	for name, data := range hostileModules() {
		file := filepath.Join("..", "..", "testdata", "hostile", name)
		if update {
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s differs from hostileModules (%v): rerun with PATHFINDER_HOSTILE_UPDATE=1", file, err)
		}
	}
}

// hostileLogBounded checks the step's log kept its bound, the host's lines about the plugin included,
// and said what it dropped.
func hostileLogBounded(t *testing.T, _ hostileDirs, ex *search.Explanation) {
	st := ex.Steps[0]
	n := 0
	for _, l := range st.Log {
		n += len(l)
	}
	if st.Outcome != "nothing" || len(st.Log) < 10 || len(st.Log) > 1001 || n > 64<<10+200 ||
		!strings.Contains(st.Log[len(st.Log)-1], "more log lines dropped") {
		t.Errorf("outcome %s, %d log lines, %d bytes, the last %q: want nothing, at most 1000 lines and 64 KiB, then what was dropped",
			st.Outcome, len(st.Log), n, st.Log[len(st.Log)-1])
	}
}

// hostilePrintable checks that nothing in the trace holds a character a terminal acts on: control
// characters (newlines, carriage returns, escapes, bells) or bidirectional overrides.
func hostilePrintable(t *testing.T, _ hostileDirs, ex *search.Explanation) {
	check := func(what, s string) {
		for _, r := range s {
			if unicode.IsControl(r) || r == '\u202e' {
				t.Errorf("%s holds %U: %q", what, r, s)
				return
			}
		}
	}
	for _, st := range ex.Steps {
		check("detail", st.Detail)
		for _, l := range st.Log {
			check("log", l)
		}
		for _, a := range st.Tried {
			check("tried path", a.Path)
			check("tried reason", a.Reason)
		}
		for _, c := range st.Candidates {
			check("candidate path", c.Path)
			check("found_via", c.FoundVia)
			check("refusal", c.Refused)
		}
		for _, in := range st.Ignored {
			check("ignored", in.String())
		}
	}
	if err := ex.Err; err != nil {
		check("error", err.Error())
	}
}

// hostileIgnoredGranted checks what hostile-text says it passed over: its granted variable, named
// with the host's value, and not the one it made up.
func hostileIgnoredGranted(t *testing.T, d hostileDirs, ex *search.Explanation) {
	hostilePrintable(t, d, ex)
	if in := ex.Steps[0].Ignored; len(in) != 1 || in[0].Name != "HOSTILE_ROOT" || in[0].Value != d.root {
		t.Errorf("ignored %+v; want HOSTILE_ROOT=%s alone", in, d.root)
	}
}

// hostileValidUTF8 checks nothing in the trace is invalid UTF-8.
func hostileValidUTF8(t *testing.T, _ hostileDirs, ex *search.Explanation) {
	for _, st := range ex.Steps {
		for _, c := range st.Candidates {
			if !utf8.ValidString(c.Path) || !utf8.ValidString(c.FoundVia) || !utf8.ValidString(c.Refused) {
				t.Errorf("candidate %q (%q, %q) is not valid UTF-8", c.Path, c.FoundVia, c.Refused)
			}
		}
		for _, a := range st.Tried {
			if !utf8.ValidString(a.Path) || !utf8.ValidString(a.Reason) {
				t.Errorf("attempt %q (%q) is not valid UTF-8", a.Path, a.Reason)
			}
		}
	}
}

const (
	hostileSecret  = "s3cr3t-content-7f3a"
	hostileControl = "inside-ok"
)

// hostileLink makes the hostile step's candidate a symbolic link to what target says, after target
// has made what the link leads to, if anything.
func hostileLink(target func(*testing.T, hostileDirs) string) func(*testing.T, hostileDirs) {
	return func(t *testing.T, d hostileDirs) {
		filetree.Symlink(t, target(t, d), filepath.Join(d.root, "lib/libcudart.so.13"))
	}
}

// hostileSecrets puts a secret outside the root, a control file inside it, and symlinks inside that
// point out.
func hostileSecrets(t *testing.T, d hostileDirs) {
	secret := filetree.Put(t, d.outside, "secret.txt", []byte(hostileSecret+"\n"))
	filetree.Put(t, d.root, "inside.txt", []byte(hostileControl+"\n"))
	for link, target := range map[string]string{
		"link-abs":    secret,
		"link-rel":    "../outside/secret.txt",
		"link-dir":    d.outside,
		"sub/link-up": "../../outside/secret.txt",
	} {
		filetree.Symlink(t, target, filepath.Join(d.root, link))
	}
}

// hostileCheckConfined checks the read step read its control file and nothing else, wrote nothing,
// and that the secret appears nowhere in the explanation.
func hostileCheckConfined(t *testing.T, d hostileDirs, ex *search.Explanation) {
	st := ex.Steps[0]
	control := filepath.Join(d.root, "inside.txt")
	reads, writes := 0, 0
	for _, a := range st.Tried {
		switch {
		case a.Reason == "read ok" && a.Path == control:
			reads++
		case strings.HasPrefix(a.Reason, "read refused: "):
			reads++
		case strings.HasPrefix(a.Reason, "write refused: "):
			writes++
		default:
			t.Errorf("the plugin got through: %s: %s", a.Path, a.Reason)
		}
	}
	if reads != 11 || writes != 2 {
		t.Errorf("%d reads and %d writes recorded; want 11 and 2", reads, writes)
	}
	if len(st.Candidates) != 1 || st.Candidates[0].Path != hostileControl {
		t.Errorf("candidates %+v; want only the control file's content, %q", st.Candidates, hostileControl)
	}
	b, _ := json.Marshal(ex)
	if bytes.Contains(b, []byte(hostileSecret)) {
		t.Errorf("the secret leaked into the explanation: %s", b)
	}
	for _, p := range []string{filepath.Join(d.root, "pwned.txt"), filepath.Join(d.outside, "pwned.txt")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the plugin wrote %s", p)
		}
	}
}

// hostileCheckEnv checks the env step saw exactly the granted variables.
func hostileCheckEnv(t *testing.T, d hostileDirs, ex *search.Explanation) {
	want := map[string]string{
		"HOSTILE_GRANTED":          "set: granted-ok",
		"HOSTILE_SECRET":           "unset",
		"PATHFINDER_SITE_PACKAGES": "unset",
		"PATH":                     "unset",
		"HOME":                     "unset",
		"environ":                  "HOSTILE_GRANTED=granted-ok HOSTILE_ROOT=" + d.root,
	}
	got := map[string]string{}
	for _, a := range ex.Steps[0].Tried {
		got[a.Path] = a.Reason
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the plugin saw %v; want %v", got, want)
	}
}

// hostileStep is one [plugin.NAME] table.
type hostileStep struct {
	name, source, memory, timeout string
	options                       map[string]string
	caps                          []string
}

// hostileConfig writes a config whose search order is order, with the given plugin steps. Each step
// may read $HOSTILE_ROOT and the variables HOSTILE_ROOT and HOSTILE_GRANTED.
func hostileConfig(order []string, steps ...hostileStep) string {
	var b strings.Builder
	q, _ := json.Marshal(order)
	fmt.Fprintf(&b, "[search]\norder = %s\n", q)
	for _, s := range steps {
		fmt.Fprintf(&b, "\n[plugin.%s]\nsource = %q\nread = [\"$HOSTILE_ROOT\"]\nenv = [\"HOSTILE_ROOT\", \"HOSTILE_GRANTED\"]\n", s.name, s.source)
		if s.memory != "" {
			fmt.Fprintf(&b, "memory = %q\n", s.memory)
		}
		if s.timeout != "" {
			fmt.Fprintf(&b, "timeout = %q\n", s.timeout)
		}
		if len(s.caps) > 0 {
			c, _ := json.Marshal(s.caps)
			fmt.Fprintf(&b, "capabilities = %s\n", c)
		}
		if len(s.options) > 0 {
			fmt.Fprintf(&b, "[plugin.%s.options]\n", s.name)
			for k, v := range s.options {
				fmt.Fprintf(&b, "%s = '%s'\n", k, v) // a TOML literal string: hostileQuote never writes ' or a newline
			}
		}
	}
	return b.String()
}

// hostileQuote joins paths as Go string literals, the form the Go plugin's options take.
func hostileQuote(paths ...string) string {
	var q []string
	for _, p := range paths {
		q = append(q, strconv.Quote(p))
	}
	return strings.Join(q, " ")
}

// hostileTestdata returns the absolute path of a file in testdata/hostile.
func hostileTestdata(t *testing.T, name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "hostile", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hostileCopy copies a module of testdata/hostile into a private directory with mode 0644: the host
// refuses plugin files that others may write, and a checkout's modes follow its umask.
func hostileCopy(t *testing.T, name string) string {
	b, err := os.ReadFile(hostileTestdata(t, name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hostileRealLib(t *testing.T) []byte { return elfLib(t, "libcudart.so.13") }

var (
	hostileOnce sync.Once
	hostileWasm []byte
	hostileErr  error
)

// hostileGoPlugin builds the Go plugin once per test binary and returns the path of a copy in the
// test's temp dir.
func hostileGoPlugin(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found")
	}
	hostileOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pathfinder-hostile-")
		if err != nil {
			hostileErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "hostile.wasm")
		cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, "./testdata/hostile/plugin")
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
		if b, err := cmd.CombinedOutput(); err != nil {
			hostileErr = fmt.Errorf("%v: %v\n%s", cmd.Args, err, b)
			return
		}
		hostileWasm, hostileErr = os.ReadFile(out)
	})
	if hostileErr != nil {
		t.Fatal(hostileErr)
	}
	return filetree.Put(t, t.TempDir(), "hostile.wasm", hostileWasm)
}

// hostileSuite is what the cases of one test share: one engine, so that each module is compiled
// once for all of them (loading a 3.5 MB module, even from the disk cache, takes a second or two
// under -race, and every case would pay it twice), and the cases' Finders, all closed when the test
// ends: a pooled instance's mounts are the os.Roots of the Engine that started it, so no Engine may
// close before the last case that can reuse its instances.
type hostileSuite struct {
	engine  *wasm.Engine
	mu      sync.Mutex
	finders []*Engine
}

func newHostileSuite(t *testing.T) *hostileSuite {
	dir := newFinder(t, nil, "").cacheDir
	eng := wasm.NewEngine(dir)
	eng.CompileTimeout = testCompileTimeout
	s := &hostileSuite{engine: eng}
	t.Cleanup(func() {
		eng.Close()
		for _, f := range s.finders {
			f.Close() // closes its roots; closing the engine again does nothing
		}
	})
	// The engine compiles each module once and different modules in parallel: with a cold cache,
	// compile the builtin module on the side while the Go plugin compiles.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		eng.Load(bg, builtin.StepsModule(), 64<<20, time.Hour)
	}()
	if _, err := eng.Load(bg, hostileWasm, 64<<20, time.Hour); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	return s
}

// finder is newFinder with the suite's engine, closed with the suite.
func (s *hostileSuite) finder(t *testing.T, env testEnv, config string, h hooks) *Engine {
	t.Helper()
	env["PATHFINDER_CACHE_DIR"] = sharedCacheDir
	h.engine = s.engine
	f, err := New(Options{LookupEnv: env.lookup, SystemConfigDir: t.TempDir(), ConfigFile: filetree.Put(t, t.TempDir(), "pathfinder.toml", []byte(config)), hooks: h})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.finders = append(s.finders, f)
	s.mu.Unlock()
	return f
}

// hostileModule is a tiny hand-assembled plugin. Each export's body is raw wasm code ending in end
// (0x0b), nil for an export the module lacks.
type hostileModule struct {
	imports    []string // "module.name" functions of type () -> (), or "module.name(i32)" of (i32) -> ()
	initialize []byte   // _initialize: () -> ()
	start      []byte   // _start: () -> (), a command's entry point
	version    []byte   // () -> i32
	alloc      []byte   // (size i32) -> i32
	search     []byte   // (ptr, len i32) -> i64
	pages      uint32   // initial pages of the exported "memory"; 0 for no memory
	data       []byte   // at address 0
}

// Wasm code used in hostileModules.
var (
	hostileUnreachable = []byte{0x00, 0x0b}
	hostileLoop        = []byte{0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b}             // loop br 0 end
	hostileLoopI32     = []byte{0x03, 0x40, 0x0c, 0x00, 0x0b, 0x41, 0x00, 0x0b} // loop br 0 end; i32.const 0
	hostileLoopI64     = []byte{0x03, 0x40, 0x0c, 0x00, 0x0b, 0x42, 0x00, 0x0b} // loop br 0 end; i64.const 0
	hostileExitMinus1  = []byte{0x41, 0x7f, 0x10, 0x00, 0x42, 0x00, 0x0b}       // i32.const -1; call 0 (proc_exit); i64.const 0
)

// hostileSlowLoops is the size of slow-to-compile.wasm's loop nest: a quarter of a second to compile
// here, several under -race; TestHostile_slowToCompile gives up well before.
const hostileSlowLoops = 3000

// hostileNestedLoops is a search body that wazero's compiler takes time quadratic in n to compile:
// n nested loops and one br_table over all of them. (n = 10000, 50 KB: 3.6 s; 14000: 7 s.)
func hostileNestedLoops(n int) []byte {
	var b []byte
	for range n {
		b = append(b, 0x03, 0x40) // loop
	}
	b = append(b, 0x20, 0x00, 0x0e) // local.get 0; br_table
	b = append(b, hostileULEB(uint32(n))...)
	for i := range n {
		b = append(b, hostileULEB(uint32(i))...)
	}
	b = append(b, 0x00) // the default label
	for range n {
		b = append(b, 0x0b) // end
	}
	return append(b, 0x42, 0x00, 0x0b) // i64.const 0; end
}

// BenchmarkCompile_nestedLoops is wazero's compile time against module size for the shape
// hostileNestedLoops builds, the curve docs/performance.md shows:
//
//	go test -run '^$' -bench Compile_nestedLoops -benchtime 3x ./internal/engine
func BenchmarkCompile_nestedLoops(b *testing.B) {
	for _, n := range []int{500, 1000, 2000, 4000, 6000, 8000, 12000} {
		m := hostileModule{version: hostileI32(abi.Version), alloc: hostileI32(1024), search: hostileNestedLoops(n), pages: 1}
		code := m.encode()
		b.Run(fmt.Sprintf("%dKB", len(code)/1000), func(b *testing.B) {
			for range b.N {
				eng := wasm.NewEngine("")
				if _, err := eng.Load(bg, code, 64<<20, time.Hour); err != nil {
					b.Fatal(err)
				}
				eng.Close()
			}
		})
	}
}

func hostileI32(v int32) []byte  { return append(append([]byte{0x41}, hostileSLEB(int64(v))...), 0x0b) }
func hostileI64(v uint64) []byte { return append(append([]byte{0x42}, hostileSLEB(int64(v))...), 0x0b) }

// hostileModules is the source of the tiny modules in testdata/hostile. Each is well formed except
// for the one thing its name says.
func hostileModules() map[string][]byte {
	ok := func(edit func(m *hostileModule)) []byte {
		m := hostileModule{version: hostileI32(abi.Version), alloc: hostileI32(1024), search: hostileI64(0), pages: 1}
		edit(&m)
		return m.encode()
	}
	respond := func(data string) func(m *hostileModule) {
		return func(m *hostileModule) { m.data, m.search = []byte(data), hostileI64(uint64(len(data))) }
	}
	return map[string][]byte{
		"abi-version-1.wasm":          ok(func(m *hostileModule) { m.version = hostileI32(abi.Version - 1) }),
		"abi-version-3.wasm":          ok(func(m *hostileModule) { m.version = hostileI32(abi.Version + 1) }),
		"missing-search.wasm":         ok(func(m *hostileModule) { m.search = nil }),
		"no-memory.wasm":              ok(func(m *hostileModule) { m.pages = 0 }),
		"unknown-import.wasm":         ok(func(m *hostileModule) { m.imports = []string{abi.ImportModule + ".hostile_unknown"} }),
		"unreachable.wasm":            ok(func(m *hostileModule) { m.search = hostileUnreachable }),
		"initialize-trap.wasm":        ok(func(m *hostileModule) { m.initialize = hostileUnreachable }),
		"search-loop.wasm":            ok(func(m *hostileModule) { m.search = hostileLoopI64 }),
		"version-loop.wasm":           ok(func(m *hostileModule) { m.version = hostileLoopI32 }),
		"memory-over-cap.wasm":        ok(func(m *hostileModule) { m.pages = 65536 }),
		"garbage.wasm":                ok(respond("\x00\xff<html>this is not JSON</html>")),
		"invalid-utf8.wasm":           ok(respond(`{"candidates":[{"path":"/` + "\xff\xfe" + `/lib` + "\xc3" + `cudart.so.13","found_via":"` + "\xed\xa0\x80" + `"}],"tried":[{"path":"` + "\xff" + `","reason":"` + "\xc0\xaf" + `"}]}`)),
		"response-out-of-bounds.wasm": ok(func(m *hostileModule) { m.search = hostileI64(0xfffffff0<<32 | 256) }),
		"response-past-end.wasm":      ok(func(m *hostileModule) { m.search = hostileI64(65000<<32 | 1000) }),
		"response-huge.wasm":          ok(func(m *hostileModule) { m.pages, m.search = 257, hostileI64(16<<20+1) }),
		"alloc-out-of-bounds.wasm":    ok(func(m *hostileModule) { m.alloc = hostileI32(-0x10000) }),
		"not-wasm.wasm":               []byte("this is not a wasm module\n"),
		"initialize-loop.wasm":        ok(func(m *hostileModule) { m.initialize = hostileLoop }),
		"exit-minus-one.wasm": ok(func(m *hostileModule) {
			m.imports, m.search = []string{"wasi_snapshot_preview1.proc_exit(i32)"}, hostileExitMinus1
		}),
		"slow-to-compile.wasm": ok(func(m *hostileModule) { m.search = hostileNestedLoops(hostileSlowLoops) }),
		// A Go plugin built without -buildmode=c-shared: _start, and exports that trap until it ran.
		"command.wasm": ok(func(m *hostileModule) {
			m.start, m.version, m.alloc, m.search = []byte{0x0b}, hostileUnreachable, hostileUnreachable, hostileUnreachable
		}),
	}
}

// encode assembles the module: types, imports, functions, memory, exports, code, data.
func (m hostileModule) encode() []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	section := func(id byte, items ...[]byte) {
		if len(items) == 0 {
			return
		}
		body := hostileULEB(uint32(len(items)))
		for _, it := range items {
			body = append(body, it...)
		}
		out = append(append(append(out, id), hostileULEB(uint32(len(body)))...), body...)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	name := func(s string) []byte { return cat(hostileULEB(uint32(len(s))), []byte(s)) }

	// Types: 0 () -> (), 1 () -> i32, 2 (i32) -> i32, 3 (i32, i32) -> i64, and 4 (i32) -> () when an
	// import needs it.
	types := [][]byte{{0x60, 0, 0}, {0x60, 0, 1, 0x7f}, {0x60, 1, 0x7f, 1, 0x7f}, {0x60, 2, 0x7f, 0x7f, 1, 0x7e}}
	var imports [][]byte
	for _, im := range m.imports {
		typ := byte(0)
		if fn, ok := strings.CutSuffix(im, "(i32)"); ok {
			im, typ = fn, 4
			if len(types) == 4 {
				types = append(types, []byte{0x60, 1, 0x7f, 0})
			}
		}
		mod, fn, _ := strings.Cut(im, ".")
		imports = append(imports, cat(name(mod), name(fn), []byte{0x00, typ}))
	}
	section(1, types...)
	section(2, imports...)
	var funcs, exports, code [][]byte
	for _, f := range []struct {
		name string
		typ  byte
		body []byte
	}{{"_initialize", 0, m.initialize}, {"_start", 0, m.start}, {abi.ExportVersion, 1, m.version}, {abi.ExportAlloc, 2, m.alloc}, {abi.ExportSearch, 3, m.search}} {
		if f.body == nil {
			continue
		}
		exports = append(exports, cat(name(f.name), []byte{0x00}, hostileULEB(uint32(len(m.imports)+len(funcs)))))
		funcs = append(funcs, []byte{f.typ})
		body := cat([]byte{0x00}, f.body) // no locals
		code = append(code, cat(hostileULEB(uint32(len(body))), body))
	}
	section(3, funcs...)
	if m.pages > 0 {
		section(5, cat([]byte{0x00}, hostileULEB(m.pages)))
		exports = append(exports, cat(name("memory"), []byte{0x02, 0x00}))
	}
	section(7, exports...)
	section(10, code...)
	if len(m.data) > 0 {
		section(11, cat([]byte{0x00, 0x41, 0x00, 0x0b}, hostileULEB(uint32(len(m.data))), m.data))
	}
	return out
}

func hostileULEB(v uint32) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func hostileSLEB(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// TestHostile_slowToCompile gives a step a module that takes far longer to compile than the step's
// timeout: the search waits no longer than the timeout for it (before, 1.5 to 5 s against a 1 s
// timeout), the step fails saying so, the next step still finds the library, and no later search
// of the same timeout, in this process or the next, waits for the module again. A longer timeout
// tries again.
func TestHostile_slowToCompile(t *testing.T) {
	base := t.TempDir()
	newEngine := func() *wasm.Engine {
		eng := wasm.NewEngine(filepath.Join(base, "wazero"))
		t.Cleanup(func() { eng.Close() })
		// The builtin steps are compiled first, as in any process; then, however fast this machine
		// compiles, a compile starts only when the test ends.
		if _, err := eng.Load(bg, builtin.StepsModule(), 64<<20, time.Hour); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		eng.BeforeCompile = func() { <-release }
		t.Cleanup(func() { close(release) })
		return eng
	}
	site := t.TempDir()
	want := filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	source := hostileCopy(t, "slow-to-compile.wasm")
	search := func(eng *wasm.Engine, timeout time.Duration, wantDetail string) time.Duration {
		t.Helper()
		config := hostileConfig([]string{"hostile-x", "wheels"}, hostileStep{name: "hostile-x", source: source, timeout: timeout.String()})
		f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "HOSTILE_ROOT": t.TempDir(), "PATHFINDER_CACHE_DIR": base, "PATHFINDER_TEST_OWN_ENGINE": "1"}, config,
			func(o *Options) { o.hooks.engine = eng })
		start := time.Now()
		ex := f.Explain(bg, DynamicLib, "cudart")
		took := time.Since(start)
		if ex.Err != nil || ex.Result == nil || ex.Result.Path != want || ex.Steps[0].Outcome != "failed" || !strings.Contains(ex.Steps[0].Detail, wantDetail) {
			t.Fatalf("%v; want the hostile step failed saying %q, then %s from wheels\n%s", ex.Err, wantDetail, want, dump(ex))
		}
		t.Logf("%v: %s", took, ex.Steps[0].Detail)
		return took
	}
	const timeout, slack = 300 * time.Millisecond, 1500 * time.Millisecond
	refused := func(d time.Duration) string {
		return fmt.Sprintf(`plugin "hostile-x": refused: compiling it took over %v, the step's timeout (a module this costly to compile is never run) (remembered in `, d)
	}
	first := newEngine()
	if took := search(first, timeout, refused(timeout)); took > timeout+slack {
		t.Errorf("the search took %v, past the step's %v timeout and %v", took, timeout, slack)
	}
	if took := search(first, timeout, refused(timeout)); took > slack { // this process remembers
		t.Errorf("the search took %v though the refusal was remembered", took)
	}
	// The next process does not wait for it again, at that timeout or a shorter one.
	if took := search(newEngine(), timeout/2, refused(timeout)); took > slack {
		t.Errorf("the next process's search took %v though the refusal was remembered", took)
	}
	// A longer timeout gives the compile another chance, within it.
	search(newEngine(), 2*timeout, refused(2*timeout))
}

// TestHostile_commandRefusedOnce: a module built as a command is refused before it is compiled (a
// Go plugin built so cost seconds of compiling in every run), the refusal is remembered in the
// cache dir, and the not-found error names the step that failed and why.
func TestHostile_commandRefusedOnce(t *testing.T) {
	base := t.TempDir()
	source := hostileCopy(t, "command.wasm")
	config := hostileConfig([]string{"hostile-x"}, hostileStep{name: "hostile-x", source: source})
	for run := range 2 {
		eng := wasm.NewEngine(filepath.Join(base, "wazero"))
		t.Cleanup(func() { eng.Close() })
		eng.BeforeCompile = func() { t.Errorf("run %d compiled a module built as a command", run+1) }
		f := newFinder(t, testEnv{"HOSTILE_ROOT": t.TempDir(), "PATHFINDER_CACHE_DIR": base, "PATHFINDER_TEST_OWN_ENGINE": "1"}, config,
			func(o *Options) { o.hooks.engine = eng })
		_, err := f.Find(bg, "cudart")
		const want = `"cudart" not found: looked for libcudart.so.13 or libcudart.so.12 in 1 place; 1 step failed (hostile-x: built as a command)`
		se, _ := err.(*SearchError)
		if se == nil || se.Error() != want || len(se.Failed) != 1 || !strings.Contains(se.Failed[0].Reason, "(remembered in "+filepath.Join(base, "wazero")) {
			t.Errorf("run %d: %v (%+v); want %q, the refusal remembered in the cache dir", run+1, err, se, want)
		}
	}
}

// TestHostile_hugeModule gives a plugin file larger than any module may be: it is refused without
// being read.
func TestHostile_hugeModule(t *testing.T) {
	site := t.TempDir()
	want := filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	huge := filepath.Join(t.TempDir(), "huge.wasm")
	if err := os.WriteFile(huge, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, abi.MaxModuleBytes+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "HOSTILE_ROOT": t.TempDir()},
		hostileConfig([]string{"hostile-x", "wheels"}, hostileStep{name: "hostile-x", source: huge}))
	ex := f.Explain(bg, DynamicLib, "cudart")
	wantDetail := fmt.Sprintf("%s: %d bytes, over the %d-byte limit on a module", huge, abi.MaxModuleBytes+1, abi.MaxModuleBytes)
	if ex.Result == nil || ex.Result.Path != want || !strings.Contains(ex.Steps[0].Detail, wantDetail) {
		t.Fatalf("want the hostile step failed saying %q, then %s\n%s", wantDetail, want, dump(ex))
	}
}

// TestHostile_foundVia: a plugin has no word on where it found a candidate (abi version 2 has no
// found_via). What the host reports is the label of the granted directory the candidate lies in, or
// the one the config gives the plugin.
func TestHostile_foundVia(t *testing.T) {
	goPlugin := hostileGoPlugin(t)
	root, literal := t.TempDir(), t.TempDir()
	viaVar := filetree.Put(t, root, "lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	viaConfig := filetree.Put(t, literal, "lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	for path, want := range map[string]string{
		viaVar:    "HOSTILE_ROOT",       // a directory a variable names: the variable
		viaConfig: "hostile-candidates", // a directory the config names: the step
	} {
		opts := map[string]string{"paths": hostileQuote(path)}
		config := hostileConfig([]string{"hostile-candidates"}, hostileStep{name: "hostile-candidates", source: goPlugin, timeout: "30s", options: opts})
		config = strings.Replace(config, `read = ["$HOSTILE_ROOT"]`, fmt.Sprintf(`read = ["$HOSTILE_ROOT", %q]`, literal), 1)
		f := newFinder(t, testEnv{"HOSTILE_ROOT": root}, config)
		lib, err := f.Find(bg, "cudart")
		if err != nil || lib.Path != path || lib.FoundVia != want {
			t.Errorf("%+v, %v; want %s found via %s", lib, err, path, want)
		}
	}
	// A found_via the config gives the plugin labels what it finds in every directory it is granted:
	// still the host's word, never the plugin's.
	config := hostileConfig([]string{"hostile-candidates"}, hostileStep{name: "hostile-candidates", source: goPlugin, timeout: "30s",
		options: map[string]string{"paths": hostileQuote(viaVar)}})
	config = strings.Replace(config, `read = ["$HOSTILE_ROOT"]`, `read = ["$HOSTILE_ROOT"]`+"\nfound_via = \"vendor-tree\"", 1)
	f := newFinder(t, testEnv{"HOSTILE_ROOT": root}, config)
	if lib, err := f.Find(bg, "cudart"); err != nil || lib.Path != viaVar || lib.FoundVia != "vendor-tree" {
		t.Errorf("%+v, %v; want %s found via vendor-tree, the config's label", lib, err, viaVar)
	}
}

// TestHostile_resolveFlood has a plugin granted system_resolve ask for thousands of libraries that do
// not exist: the log keeps its bound (TestHostile_steps), and the host remembers none of the names.
func TestHostile_resolveFlood(t *testing.T) {
	goPlugin := hostileGoPlugin(t)
	f := newFinder(t, testEnv{"HOSTILE_ROOT": t.TempDir()}, hostileConfig([]string{"hostile-resolve-flood"},
		hostileStep{name: "hostile-resolve-flood", source: goPlugin, timeout: "30s", memory: "256MiB", caps: []string{abi.CapabilitySystemResolve}, options: map[string]string{"n": "5000"}}))
	ex := f.Explain(bg, DynamicLib, "cudart")
	hostileLogBounded(t, hostileDirs{}, ex)
	n := 0
	f.resolved.m.Range(func(any, any) bool { n++; return true })
	if n > 10 {
		t.Errorf("the host remembers %d answers of system_resolve; want only those for the catalog's libraries", n)
	}
}

// TestHostile_describeText lists a plugin whose description holds terminal escapes: what `pathfinder
// plugins` prints of it is escaped.
func TestHostile_describeText(t *testing.T) {
	goPlugin := hostileGoPlugin(t)
	f := newFinder(t, testEnv{"HOSTILE_ROOT": t.TempDir()}, hostileConfig([]string{"hostile-panic", "wheels"}, hostileStep{name: "hostile-panic", source: goPlugin, timeout: "30s"}))
	for _, p := range f.Plugins(bg) {
		if p.Name != "hostile-panic" {
			continue
		}
		if p.Version != `1.0\x1b[2J\u202e` {
			t.Errorf("version %q; want it escaped", p.Version)
		}
		return
	}
	t.Fatal("hostile-panic not listed")
}

// TestHostile_overBroadGrants grants the whole file system, through the config and through a
// variable. Before, `read = ["/"]` passed `config check`, let the plugin read /proc/self/environ, and
// every candidate was "outside every directory granted" (the prefix check wanted "//").
func TestHostile_overBroadGrants(t *testing.T) {
	for _, r := range []string{"/", "/proc/self", "/sys/kernel", "/dev"} {
		config := fmt.Sprintf("[plugin.wide]\nsource = \"builtin:wheels\"\nread = [%q]\n", r)
		want := fmt.Sprintf(`plugin.wide.read: %q: `, r)
		if _, err := New(Options{ConfigFile: filetree.Put(t, t.TempDir(), "p.toml", []byte(config)), SystemConfigDir: t.TempDir(), LookupEnv: testEnv{}.lookup}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("read = [%q]: %v; want an error containing %q", r, err, want)
		}
	}
	goPlugin := hostileGoPlugin(t)
	site := t.TempDir()
	want := filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	link := filepath.Join(t.TempDir(), "everything")
	filetree.Symlink(t, "/", link)
	for _, dir := range []string{"/", link} {
		f := newFinder(t, testEnv{"HOSTILE_ROOT": dir, "PATHFINDER_SITE_PACKAGES": site}, hostileConfig([]string{"hostile-read", "wheels"},
			hostileStep{name: "hostile-read", source: goPlugin, timeout: "30s", options: map[string]string{"paths": hostileQuote("/proc/self/environ", "/etc/passwd")}}))
		ex := f.Explain(bg, DynamicLib, "cudart")
		st := ex.Steps[0]
		if ex.Result == nil || ex.Result.Path != want || len(st.Candidates) != 0 || !slices.ContainsFunc(st.Log, func(l string) bool {
			return strings.Contains(l, "not granted "+dir+" (env:HOSTILE_ROOT): the whole file system is never granted")
		}) {
			t.Errorf("HOSTILE_ROOT=%s: want the grant refused, nothing read, and %s from wheels\n%s", dir, want, dump(ex))
		}
	}
	// A directory granted whole holds every path below it.
	r, err := os.OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	g := &candidate.Granted{Dirs: []candidate.Dir{{Path: "/", Root: r}, {Path: "/usr/lib", Root: r}}}
	for p, want := range map[string]int{"/etc/x": 0, "/usr/lib/x": 1, "/usr/lib": 0, "/usr/libx": 0, "/": -1, "relative": -1} {
		if _, i := g.DirOf(p); i != want {
			t.Errorf("mountOf(%q) = %d, want %d", p, i, want)
		}
	}
}

// TestHostile_deepCandidates proposes the most candidates a step may, each a path 1,900 directories
// deep: checking one walks every directory, so checking them all takes seconds. The checks are part
// of the step's cost: what is left when its timeout has passed is not checked. Before, 1,000 such
// candidates took 3.5 s against a 1 s timeout. The test's clock makes each check take a tenth of the
// timeout, so that the verdict does not depend on how fast this machine walks directories. The plugin is a tiny
// module that answers from its data in microseconds, so that the timeout is the checks' alone.
func TestHostile_deepCandidates(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, strings.Repeat("d/", 1900))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	cands := make([]abi.Candidate, abi.MaxCandidates)
	for i := range cands {
		cands[i].Path = filepath.Join(deep, "libcudart.so.13")
	}
	resp, _ := json.Marshal(abi.Response{Candidates: cands})
	m := hostileModule{version: hostileI32(abi.Version), alloc: hostileI32(int32(len(resp))), search: hostileI64(uint64(len(resp))),
		pages: uint32(len(resp)/65536 + 2), data: resp}
	src := filetree.PutMode(t, t.TempDir(), "deep.wasm", m.encode(), 0o644)
	// An hour, so that the plugin's call never meets its deadline in real time, however slow the
	// machine: only the step's clock below ends the checks.
	const timeout = time.Hour
	// The step's clock moves a tenth of the timeout each time it is read (once when the deadline is
	// set, once a check): the checks run past the timeout on any machine, however fast, after ten
	// of them.
	start := time.Now()
	var reads atomic.Int64
	f := newFinder(t, testEnv{"HOSTILE_ROOT": root}, hostileConfig([]string{"hostile-x"}, hostileStep{name: "hostile-x", source: src, timeout: timeout.String()}),
		func(o *Options) {
			o.hooks.now = func() time.Time { return start.Add(time.Duration(reads.Add(1)) * timeout / 10) }
		})
	ex := f.Explain(bg, DynamicLib, "cudart")
	st := ex.Steps[0]
	checked, unchecked := 0, 0
	for _, c := range st.Candidates {
		switch {
		case strings.HasPrefix(c.Refused, "cannot stat inside "):
			checked++
		case c.Refused == "not checked: the step's timeout had passed":
			unchecked++
		default:
			t.Fatalf("candidate refused as %q\n%s", c.Refused, dump(ex))
		}
	}
	t.Logf("%d checked, %d not, in %v", checked, unchecked, st.Duration)
	if checked+unchecked != abi.MaxCandidates || unchecked == 0 {
		t.Fatalf("%d checked, %d not checked, in %v; want the checks stopped at the %v timeout\n%s", checked, unchecked, st.Duration, timeout, st.Detail)
	}
}

// TestHostile_fifoInSitePackages puts a FIFO named like the library where the builtin wheels step
// looks first: before, find hung for ever in the step's open (a host call no deadline interrupts).
// Now the step goes on to the next layout.
func TestHostile_fifoInSitePackages(t *testing.T) {
	site := t.TempDir()
	fifo := filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13")
	os.MkdirAll(filepath.Dir(fifo), 0o755)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	want := filetree.Put(t, site, "nvidia/cuda_runtime/lib/libcudart.so.12", elfLib(t, "libcudart.so.12"))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site}, "[search]\norder = [\"wheels\"]\n")
	explainPastFIFO(t, f, fifo, want)
}

// TestHostile_fifoOnLoaderPath puts a FIFO named like the library in the first directory of
// LD_LIBRARY_PATH: the system step's model of the loader must not wait on it (the loader itself
// would), and goes on to the next directory. Through system_resolve a plugin reaches the same model.
func TestHostile_fifoOnLoaderPath(t *testing.T) {
	first := t.TempDir()
	fifo := filepath.Join(first, "libcudart.so.13")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	want := filetree.Put(t, t.TempDir(), "libcudart.so.13", elfLib(t, "libcudart.so.13"))
	f := newFinder(t, testEnv{"LD_LIBRARY_PATH": first + ":" + filepath.Dir(want)}, "[search]\norder = [\"system\"]\n")
	explainPastFIFO(t, f, fifo, want)
}

// explainPastFIFO explains cudart with f, which must find want and not wait on the FIFO at fifo: a
// minute later the test opens the FIFO's other end, so that a blocked open ends, and fails.
func explainPastFIFO(t *testing.T, f *Engine, fifo, want string) {
	t.Helper()
	done := make(chan *search.Explanation, 1)
	go func() { done <- f.Explain(bg, DynamicLib, "cudart") }()
	select {
	case ex := <-done:
		if ex.Result == nil || ex.Result.Path != want {
			t.Fatalf("want %s\n%s", want, dump(ex))
		}
	case <-time.After(time.Minute):
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close() // let the blocked open end
		}
		t.Fatal("find blocked on the FIFO")
	}
}
