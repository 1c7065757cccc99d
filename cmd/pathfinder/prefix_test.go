package main

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestErrors_onePrefix: the packages' errors carry no program prefix; the command adds
// "pathfinder: " once to every line it prints of one, a config error, a config check's
// several problems and a search error alike; and every error, from the command line, a config or
// the search, starts with "pathfinder: " and never carries it twice. (A mistake in the command line
// itself is a usage error, followed by the usage line: TestUsageErrors_usageLine.)
func TestErrors_onePrefix(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	dir := t.TempDir()
	config := func(body string) string { return filetree.PutMode(t, dir, "p.toml", []byte(body), 0o644) }
	notWasm := []byte("not a wasm module")
	sum := sha256.Sum256(notWasm)
	pin := hex.EncodeToString(sum[:])
	filetree.PutMode(t, dir, "a.wasm", notWasm, 0o644)
	filetree.PutMode(t, dir, "b.wasm", notWasm, 0o644)
	tests := []struct {
		name   string
		args   func() []string
		code   int
		stderr []string // the lines, each after "pathfinder: ", in order; $P is the config file
	}{
		{"a mistyped grant, by config check", func() []string {
			return []string{"config", "check", config("[plugin.wheels]\nread = [\"@site-package\"]\n")}
		}, exitUsage, []string{`config $P:2:1: plugin.wheels.read: unknown grant "@site-package" (did you mean "@site-packages"?) (known: @site-packages, @install-root-env-vars, @canary-roots)`}},
		{"a mistyped step, by find", func() []string {
			return []string{"find", "cudart", "--config", config("[search]\norder = [\"cnda\"]\n")}
		}, exitUsage, []string{`config $P:2:1: search.order names unknown step "cnda" (did you mean "conda"?) (known: already-loaded, canary, conda, envroots, programfiles, system, wheels)`}},
		{"a value of the wrong type", func() []string {
			return []string{"config", "check", config("[search]\norder = \"wheels\"\n")}
		}, exitUsage, []string{`config $P:2:1: search.order: expected an array, found a string`}},
		{"two plugins that cannot load", func() []string {
			return []string{"config", "check", config("[plugin.a]\nsource = \"a.wasm\"\nsha256 = \"" + pin + "\"\n[plugin.b]\nsource = \"b.wasm\"\nsha256 = \"" + pin + "\"\n")}
		}, exitUsage, []string{`config $P:2:1: plugin "a": not a valid wasm module`, `config $P:5:1: plugin "b": not a valid wasm module`}},
		{"an unknown library", func() []string { return []string{"find", "cudartt"} }, exitNotFound,
			[]string{`unknown library "cudartt" (did you mean "cudart" or "cuda"?)`}},
	}
	for _, tt := range tests { // one after another: each case rewrites the config file its messages name
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := e.run(t, tt.args()...)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if code != tt.code || len(lines) != len(tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %d lines", code, errOut, tt.code, len(tt.stderr))
			}
			for i, want := range tt.stderr {
				want = "pathfinder: " + strings.ReplaceAll(want, "$P", filepath.Join(dir, "p.toml"))
				if !strings.HasPrefix(lines[i], want) || strings.Count(lines[i], "pathfinder: ") != 1 {
					t.Errorf("line %d: %q\nwant it to start %q, with the prefix once", i+1, lines[i], want)
				}
			}
		})
	}
	bad := write(t, t.TempDir()+"/bad.toml", []byte("[search]\ncolour = \"blue\"\n"))
	for _, args := range [][]string{
		{"fnd"}, {"find"}, {"find", "cudart", "--kind", "x"}, {"find", "nvfatbin"}, {"find", "nosuchlib"},
		{"find", "cudart", "--config", bad}, {"list", "--config", "/nonexistent/p.toml"}, {"config", "check", bad},
		{"doctor", "--root", "/nonexistent"}, {"plugins", "--config", bad},
		{"find", "--all-from-one-toolkit", "cudart", "nosuchlib"},
	} {
		_, errOut, code := e.run(t, args...)
		if code == exitOK || !strings.HasPrefix(errOut, "pathfinder: ") || strings.Contains(errOut, "pathfinder: pathfinder:") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}
