package search_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/config"
)

// TestNames: the kinds and host-owned steps named here are the ones the catalog and the
// configuration use.
func TestNames(t *testing.T) {
	var kinds []search.Kind
	for _, k := range catalog.Kinds {
		kinds = append(kinds, search.Kind(k.Kind))
		if got, err := search.ParseKind(string(k.Kind)); err != nil || string(got) != string(k.Kind) {
			t.Errorf("ParseKind(%q) = %q, %v", k.Kind, got, err)
		}
	}
	if !reflect.DeepEqual(search.Kinds(), kinds) {
		t.Errorf("Kinds() = %v, the catalog's %v", search.Kinds(), kinds)
	}
	if _, err := search.ParseKind("library"); err == nil || err.Error() != `unknown kind "library" (dynamic-lib, header-dir, binary, static-lib or bitcode)` {
		t.Errorf("ParseKind(library) = %v", err)
	}
	if search.StepAlreadyLoaded != config.StepAlreadyLoaded || search.StepSystem != config.StepSystem {
		t.Errorf("steps %q %q, the configuration's %q %q", search.StepAlreadyLoaded, search.StepSystem, config.StepAlreadyLoaded, config.StepSystem)
	}
}

type coded struct{ error }

func (coded) Code() string { return "not-found" }

// TestExplanation_JSON: an explanation's JSON carries its error's code, where the error has one,
// and its text.
func TestExplanation_JSON(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, `{"name":"cudart","kind":"dynamic-lib","duration_ns":0}`},
		{errors.New("plain"), `{"name":"cudart","kind":"dynamic-lib","duration_ns":0,"message":"plain"}`},
		{coded{errors.New("nothing")}, `{"name":"cudart","kind":"dynamic-lib","duration_ns":0,"error":"not-found","message":"nothing"}`},
	} {
		js, err := json.Marshal(search.Explanation{Name: "cudart", Kind: search.DynamicLib, Err: tt.err})
		if err != nil || string(js) != tt.want {
			t.Errorf("Err %v: %s, %v; want %s", tt.err, js, err, tt.want)
		}
	}
}

// TestAttempts: the flat list is each step's tries, then its candidates not taken, then the detail
// of a step that failed or was skipped. A step that failed on a found file, as every load does in
// the pathfinder_static build, adds no attempt without a reason: its candidate says why.
func TestAttempts(t *testing.T) {
	const unavailable = "this build cannot load libraries (pathfinder_static)"
	ex := search.Explanation{Steps: []search.StepTrace{
		{Step: "wheels", Outcome: search.OutcomeNothing, Tried: []search.Attempt{{Step: "wheels", Path: "/a", Reason: "no such directory"}},
			Candidates: []search.CandidateTrace{{Path: "/b", Refused: "not an ELF file"}, {Path: "/c", Taken: true}}},
		{Step: "conda", Outcome: search.OutcomeSkipped, Detail: "CONDA_PREFIX is not set"},
		{Step: "envroots", Outcome: search.OutcomeFailed, Candidates: []search.CandidateTrace{{Path: "/cuda/lib64/libcudart.so.12", Refused: unavailable}}},
		{Step: "mine", Outcome: search.OutcomeFailed, Detail: `plugin "mine": trapped`},
		{Step: "system", Outcome: search.OutcomeFound, Detail: "found"},
	}}
	want := []search.Attempt{
		{Step: "wheels", Path: "/a", Reason: "no such directory"},
		{Step: "wheels", Path: "/b", Reason: "not an ELF file"},
		{Step: "conda", Reason: "CONDA_PREFIX is not set"},
		{Step: "envroots", Path: "/cuda/lib64/libcudart.so.12", Reason: unavailable},
		{Step: "mine", Reason: `plugin "mine": trapped`},
	}
	if got := ex.Attempts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Attempts() = %v, want %v", got, want)
	}
}

// TestIgnoredInput_String: the value is anyone's, so it is escaped.
func TestIgnoredInput_String(t *testing.T) {
	in := search.IgnoredInput{Name: "CUDA_HOME", Value: "/opt/cuda\x1b[2J", Reason: "CUDA_PATH is set"}
	if got, want := in.String(), `$CUDA_HOME=/opt/cuda\x1b[2J (CUDA_PATH is set)`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestDeps_leaf: this package is a leaf that the engine and the packages below it import (the
// result cache, the loader's model, the sandbox's file system), so it imports nothing of the
// module's but internal/printable (ARCHITECTURE.md).
func TestDeps_leaf(t *testing.T) {
	const module = "github.com/pathfinder-dev/pathfinder/"
	out, err := exec.Command("go", "list", "-deps", module+"host/search").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var ours []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, module) {
			ours = append(ours, strings.TrimPrefix(p, module))
		}
	}
	if want := []string{"internal/printable", "host/search"}; !reflect.DeepEqual(ours, want) {
		t.Errorf("host/search and what it imports of the module: %v, want %v", ours, want)
	}
}
