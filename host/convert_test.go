package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
)

// fill sets every field v holds, recursively, to a value of its own ("s3", 3, true, one element), so
// that a field the conversion drops shows in the JSON.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uintptr:
		v.SetUint(uint64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		if v.Type().Elem() == v.Type() || *n > 200 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && v.Field(i).Kind() != reflect.Interface {
				fill(v.Field(i), n)
			}
		}
	}
}

func sameJSON(t *testing.T, what string, engine, public any) {
	t.Helper()
	a, err := json.Marshal(engine)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(public)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("%s: the engine's JSON and host's differ:\nengine %s\nhost   %s", what, a, b)
	}
}

// TestConvert_everyField: host's types say everything the engine's say, field for field, in the
// same JSON: an answer filled in every field converts to one whose JSON is the engine's.
func TestConvert_everyField(t *testing.T) {
	n := 0
	var ex engine.Explanation
	fill(reflect.ValueOf(&ex).Elem(), &n)
	ex.Err = &engine.SearchError{Name: "cudart", Kind: "dynamic-lib", Err: engine.ErrNotFound, Looked: []string{"libcudart.so.13"}}
	sameJSON(t, "Explanation", ex, explanationOf(&ex))
	if got, want := explanationOf(&ex).Attempts(), attemptsOf(ex.Attempts()); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Errorf("Attempts: %v, want %v", got, want)
	}
	var lib engine.LoadedLibrary
	fill(reflect.ValueOf(&lib).Elem(), &n)
	sameJSON(t, "LoadedLibrary", lib, loadedOf(&lib))
	sameJSON(t, "Library", lib.Library, libraryOf(&lib.Library))
	if loadedOf(&lib).Handle != lib.Handle || lib.Handle == 0 {
		t.Errorf("Handle %v, want %v", loadedOf(&lib).Handle, lib.Handle)
	}
}

// TestConvert_names: the kinds, steps, modes and outcomes host names are the engine's.
func TestConvert_names(t *testing.T) {
	var kinds []Kind
	for _, k := range engine.Kinds() {
		kinds = append(kinds, Kind(k))
	}
	if !reflect.DeepEqual(Kinds(), kinds) {
		t.Errorf("Kinds() = %v, the engine's %v", Kinds(), kinds)
	}
	for _, pair := range [][2]string{
		{StepAlreadyLoaded, config.StepAlreadyLoaded}, {StepSystem, config.StepSystem},
		{string(CompatibilityStrict), string(engine.CompatibilityStrict)},
		{string(CompatibilityBestEffort), string(engine.CompatibilityBestEffort)},
		{string(CompatibilityOff), string(engine.CompatibilityOff)},
		{string(OutcomeFound), string(engine.OutcomeFound)}, {string(OutcomeNothing), string(engine.OutcomeNothing)},
		{string(OutcomeFailed), string(engine.OutcomeFailed)}, {string(OutcomeSkipped), string(engine.OutcomeSkipped)},
	} {
		if pair[0] != pair[1] {
			t.Errorf("host says %q where the engine says %q", pair[0], pair[1])
		}
	}
}

// TestConvert_errors: what New and a search fail with are host's own error types, with the
// engine's words.
func TestConvert_errors(t *testing.T) {
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
	_, err = f.FindKind(t.Context(), StaticLib, "cudart")
	var se *SearchError
	if !errors.As(err, &se) || !errors.Is(err, ErrUnknown) || se.Name != "cudart" || se.Kind() != StaticLib || se.Code() != "unknown" {
		t.Fatalf("FindKind(static-lib, cudart): %#v, want an unknown *SearchError", err)
	}
	if want := `unknown static library "cudart": "cudart" is a library and a header set`; se.Error() != want {
		t.Errorf("Error() = %q, want %q", se.Error(), want)
	}
	zero := &SearchError{Name: "x", Err: ErrNotFound}
	if zero.Code() != "not-found" || zero.Error() == "" || zero.Path() != "" {
		t.Errorf("a SearchError made by hand: %q %q", zero.Code(), zero.Error())
	}
}
