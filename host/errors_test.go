package host

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

// TestErrors_public: what New and a search fail with are host's own error types, with the
// engine's words, in Explain's Explanation too.
func TestErrors_public(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[search]\norder = 3\n"), 0o644)
	_, err := New(Options{ConfigFile: bad, LookupEnv: noEnv})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.File != bad || ce.Line != 2 || ce.Key != "search.order" {
		t.Fatalf("New with %s: %#v, want a *ConfigError at %s:2 on search.order", bad, err, bad)
	}

	inner := &config.PluginError{Plugin: "mine", Op: "pin", Err: errors.New("sha256 differs")}
	err = publicError(&config.Error{File: "/etc/pathfinder/pathfinder.toml", Line: 3, Col: 1, Key: "plugin.mine.source", Err: inner})
	var pe *PluginError
	if !errors.As(err, &ce) || !errors.As(err, &pe) || pe.Plugin != "mine" || pe.Op != "pin" {
		t.Fatalf("a plugin's configuration error: %#v, want a *ConfigError holding a *PluginError", err)
	}
	if want := `config /etc/pathfinder/pathfinder.toml:3:1: plugin "mine": sha256 differs`; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}

	f, err := New(Options{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.FindKind(t.Context(), search.StaticLib, "cudart")
	var se *SearchError
	if !errors.As(err, &se) || !errors.Is(err, ErrUnknown) || se.Name != "cudart" || se.Kind() != search.StaticLib || se.Code() != "unknown" {
		t.Fatalf("FindKind(static-lib, cudart): %#v, want an unknown *SearchError", err)
	}
	if want := `unknown static library "cudart": "cudart" is a library and a header set`; se.Error() != want {
		t.Errorf("Error() = %q, want %q", se.Error(), want)
	}
	ex := f.Explain(t.Context(), search.StaticLib, "cudart")
	if !errors.As(ex.Err, &se) || se.Error() != `unknown static library "cudart": "cudart" is a library and a header set` {
		t.Errorf("Explain(static-lib, cudart).Err = %#v, want the same *SearchError", ex.Err)
	}
	if js, err := json.Marshal(ex); err != nil || !strings.Contains(string(js), `"error":"unknown"`) {
		t.Errorf("Explain's JSON: %s, %v; want its error's code", js, err)
	}
	zero := &SearchError{Name: "x", Err: ErrNotFound}
	if zero.Code() != "not-found" || zero.Error() == "" || zero.Path() != "" {
		t.Errorf("a SearchError made by hand: %q %q", zero.Code(), zero.Error())
	}
}

// TestFinder_remembered: a name asked again is answered with the answer remembered, the same
// pointer, as Finder's documentation and README say.
func TestFinder_remembered(t *testing.T) {
	venv := t.TempDir()
	lib := filepath.Join(venv, "lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13")
	if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
		t.Fatal(err)
	}
	elfso.Build(t, lib, "libcudart.so.13", "int f(void) { return 0; }")
	env := map[string]string{"VIRTUAL_ENV": venv, "PATHFINDER_DRIVER_VERSION": "580.65.06", "PATHFINDER_CACHE_DIR": t.TempDir()}
	f, err := New(Options{SystemConfigDir: venv, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first, err := f.Find(t.Context(), "cudart")
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Find(t.Context(), "cudart")
	if err != nil || again != first || first.Path != lib {
		t.Errorf("Find again = %p %+v, %v; want the first answer %p (%s)", again, again, err, first, lib)
	}
}

// TestSearchError_ownSlices: what a SearchError's methods return is the caller's to change: every
// caller waiting on one search shares its error, and the file names looked for are the catalog's.
func TestSearchError_ownSlices(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	f, err := New(Options{LookupEnv: noEnv, SystemConfigDir: t.TempDir(), Platform: Platform{OS: "windows", Arch: "amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Find(t.Context(), "cudart")
	var se *SearchError
	if !errors.As(err, &se) || !errors.Is(err, ErrNotFound) || len(se.Looked()) == 0 || len(se.Attempts()) == 0 {
		t.Fatalf("Find(cudart) for Windows on a bare machine: %v; want not found, with names and attempts", err)
	}
	se.Looked()[0], se.Attempts()[0].Reason = "changed", "changed"
	if se.Looked()[0] == "changed" || se.Attempts()[0].Reason == "changed" {
		t.Errorf("a change to what Looked or Attempts returned reached the error: %v, %v", se.Looked(), se.Attempts())
	}
	_, again := f.Find(t.Context(), "cudart")
	if errors.As(again, &se) && se.Looked()[0] == "changed" {
		t.Errorf("a change to Looked reached the next search: %v", se.Looked())
	}
}
