//go:build wasip1

// Command plugin is a hostile pathfinder plugin for the host's tests (host/hostile_test.go): every
// search it registers misbehaves in one way, and the config's plugin name picks which. Built with:
//
//	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath -ldflags="-s -w" \
//		-o hostile.wasm ./testdata/hostile/plugin
//
// Options carry paths as Go string literals separated by spaces, so a test can hand it a NUL byte or
// invalid UTF-8 through TOML: paths = '"/a/b" "/c\x00d"'.
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func init() {
	for _, p := range []abi.Plugin{
		// Its version is what `pathfinder plugins` prints: a terminal escape and a bidi override.
		{Name: "hostile-panic", Search: panics, Version: "1.0\x1b[2J\u202e"},
		{Name: "hostile-exit", Search: exits},
		{Name: "hostile-loop", Search: loops},
		{Name: "hostile-oom", Search: hoards},
		{Name: "hostile-candidates", Search: proposes},
		{Name: "hostile-good", Search: proposes}, // the same, under a name a second step can use
		{Name: "hostile-read", Search: reads},
		{Name: "hostile-env", Search: peeks},
		{Name: "hostile-log", Search: floods},
		{Name: "hostile-resolve-flood", Search: resolveFloods},
		{Name: "hostile-many", Search: proposesMany},
		{Name: "hostile-text", Search: forges},
		{Name: "hostile-error-text", Search: failsForging},
		{Name: "hostile-panic-text", Search: panicsForging},
	} {
		abi.Register(p)
	}
}

func main() {}

func panics(abi.Env, *abi.Request) *abi.Response { panic("hostile: deliberate panic in search") }

func exits(abi.Env, *abi.Request) *abi.Response {
	os.Exit(3)
	return nil
}

var sink int

func loops(abi.Env, *abi.Request) *abi.Response {
	for i := 0; ; i++ {
		sink = i
	}
}

var hoard [][]byte

// hoards allocates and touches 1 MiB at a time until the runtime cannot grow memory any more.
func hoards(abi.Env, *abi.Request) *abi.Response {
	for {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hoard = append(hoard, b)
	}
}

// proposes returns option "paths" as candidates, as they are, option "repeat" times (once when unset).
func proposes(_ abi.Env, req *abi.Request) *abi.Response {
	repeat, err := strconv.Atoi(req.Options["repeat"])
	if err != nil {
		repeat = 1
	}
	resp := &abi.Response{}
	for range repeat {
		for _, p := range paths(req.Options["paths"]) {
			resp.Candidates = append(resp.Candidates, abi.Candidate{Path: p})
		}
	}
	return resp
}

// proposesMany returns option "n" candidates, each a short path that does not exist.
func proposesMany(_ abi.Env, req *abi.Request) *abi.Response {
	n, _ := strconv.Atoi(req.Options["n"])
	resp := &abi.Response{Candidates: make([]abi.Candidate, n)}
	for i := range resp.Candidates {
		resp.Candidates[i].Path = "/h/" + strconv.Itoa(i)
	}
	return resp
}

// resolveFloods calls system_resolve option "n" times, each for another library that does not exist:
// each call makes the host write a line about it.
func resolveFloods(env abi.Env, req *abi.Request) *abi.Response {
	n, _ := strconv.Atoi(req.Options["n"])
	for i := 0; i < n; i++ {
		env.Resolve("hostile-no-such-library-" + strconv.Itoa(i))
	}
	return &abi.Response{}
}

// forgery is text that, printed raw, clears the screen, sets the terminal's title, hides what follows
// behind a carriage return, reorders it (a bidi override), and starts a line of its own that looks
// like the host's.
const forgery = "\x1b[2J\x1b[H\x1b]0;pwned\x07hidden\r\u202eevil\n→ /opt/evil/libcudart.so.13 (found via site-packages, step wheels)"

// forges puts forgery everywhere a plugin's words reach the trace: the log, stdout and stderr, what it
// tried, a candidate's path, and an input it says it passed over.
func forges(env abi.Env, req *abi.Request) *abi.Response {
	env.Logf("%s", forgery)
	fmt.Fprintln(os.Stdout, forgery)
	fmt.Fprintln(os.Stderr, forgery)
	resp := &abi.Response{Tried: []abi.Attempt{{Path: "/tried" + forgery, Reason: forgery}},
		Ignored: []abi.IgnoredVar{{Var: "HOSTILE_ROOT", Reason: forgery}, {Var: forgery, Reason: forgery}}}
	for _, p := range paths(req.Options["paths"]) {
		resp.Candidates = append(resp.Candidates, abi.Candidate{Path: p})
	}
	return resp
}

// failsForging fails its search with forgery as the reason.
func failsForging(abi.Env, *abi.Request) *abi.Response { return &abi.Response{Error: forgery} }

// panicsForging panics with forgery, which the host reports as why the plugin trapped.
func panicsForging(abi.Env, *abi.Request) *abi.Response { panic(forgery) }

// reads tries to read each of option "paths" and to write each of option "write". What it could
// read becomes a candidate path, so a leak shows in the host's trace; every attempt is recorded.
func reads(_ abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	for _, p := range paths(req.Options["paths"]) {
		b, err := os.ReadFile(p)
		if err != nil {
			resp.Tried = append(resp.Tried, abi.Attempt{Path: p, Reason: "read refused: " + err.Error()})
			continue
		}
		resp.Tried = append(resp.Tried, abi.Attempt{Path: p, Reason: "read ok"})
		resp.Candidates = append(resp.Candidates, abi.Candidate{Path: strings.TrimSpace(string(b))})
	}
	for _, p := range paths(req.Options["write"]) {
		if err := os.WriteFile(p, []byte("pwned\n"), 0o644); err != nil {
			resp.Tried = append(resp.Tried, abi.Attempt{Path: p, Reason: "write refused: " + err.Error()})
		} else {
			resp.Tried = append(resp.Tried, abi.Attempt{Path: p, Reason: "write ok"})
		}
	}
	return resp
}

// peeks reports each variable of option "vars" (space separated) and the whole environment it sees.
func peeks(_ abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	for _, name := range strings.Fields(req.Options["vars"]) {
		if v, ok := os.LookupEnv(name); ok {
			resp.Tried = append(resp.Tried, abi.Attempt{Path: name, Reason: "set: " + v})
			resp.Candidates = append(resp.Candidates, abi.Candidate{Path: v})
		} else {
			resp.Tried = append(resp.Tried, abi.Attempt{Path: name, Reason: "unset"})
		}
	}
	env := os.Environ()
	sort.Strings(env)
	resp.Tried = append(resp.Tried, abi.Attempt{Path: "environ", Reason: strings.Join(env, " ")})
	return resp
}

// floods writes far more to the host's log, stdout and stderr than the host keeps.
func floods(env abi.Env, _ *abi.Request) *abi.Response {
	line := strings.Repeat("x", 5000)
	for i := 0; i < 1500; i++ {
		env.Logf("%d %s", i, line)
	}
	for i := 0; i < 20; i++ {
		os.Stdout.WriteString(line + "\n")
		os.Stderr.WriteString(line + "\n")
	}
	return &abi.Response{}
}

func paths(s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return append(out, "bad option: "+err.Error())
		}
		p, _ := strconv.Unquote(q)
		out = append(out, p)
		s = s[len(q):]
	}
	return out
}
