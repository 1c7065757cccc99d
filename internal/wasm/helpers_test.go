package wasm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
)

var ctx = context.Background()

func stepsModule(t *testing.T) *Module {
	t.Helper()
	e := NewEngine(filepath.Join(os.TempDir(), "pathfinder-test-cache", "wasm-pkg"))
	e.CompileTimeout = time.Hour // a busy machine's slow compile must not leave a refusal in the shared cache
	t.Cleanup(func() { e.Close() })
	m, err := e.Load(ctx, builtin.StepsModule(), 64<<20, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// wheelsCall runs the builtin wheels step over site and returns the first candidate's path.
// Instances are pooled by grants, so the mounted root must outlive the calls: fakeSite opens it once.
func wheelsCall(t testing.TB, m *Module, site string, root *os.Root) (string, Result) {
	req, _ := json.Marshal(abi.Request{
		ABI: abi.Version, Step: "wheels", Entry: "wheels", Kind: abi.KindDynamicLib,
		Platform: abi.Platform{OS: "linux", Arch: "amd64"},
		Library:  abi.Descriptor{Name: "cudart", LinuxSonames: []string{"libcudart.so.13"}, SitePackagesLinux: []string{"nvidia/cu13/lib"}},
		Roots:    []abi.Root{{Path: site, Role: abi.RoleSitePackages}},
	})
	out, res, err := m.Call(ctx, Grants{Mounts: []Mount{{Path: site, Root: root}}}, req, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var resp abi.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Candidates) == 0 {
		return "", res
	}
	return resp.Candidates[0].Path, res
}
