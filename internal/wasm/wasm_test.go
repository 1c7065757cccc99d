package wasm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
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

func fakeSite(t *testing.T) (site, lib string, root *os.Root) {
	site = t.TempDir()
	lib = filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13")
	os.MkdirAll(filepath.Dir(lib), 0o755)
	os.WriteFile(lib, []byte("\x7fELF"), 0o644)
	root, err := os.OpenRoot(site)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return site, lib, root
}

// TestModule_memoryStaysBounded makes thousands of calls on one instance: the guest's memory must not
// grow with the number of calls.
func TestModule_memoryStaysBounded(t *testing.T) {
	m := stepsModule(t)
	site, lib, root := fakeSite(t)
	var mid uint32
	const calls = 5000
	for i := range calls {
		got, res := wheelsCall(t, m, site, root)
		if got != lib {
			t.Fatalf("call %d: %q", i, got)
		}
		if i > 0 && !res.Reused {
			t.Fatalf("call %d did not reuse the idle instance", i)
		}
		if i == calls/2 {
			mid = m.memoryPages()
		}

	}
	end := m.memoryPages()
	// Measured: 3.3 MiB after one call, growing to a plateau of 8 MiB by about 3,000 calls as the guest's
	// heap target settles; flat after that.
	t.Logf("guest memory after %d calls: %d KiB, after %d: %d KiB", calls/2, mid*64, calls, end*64)
	if end > mid+16 || end > 256 {
		t.Fatalf("guest memory grew from %d KiB to %d KiB over the last %d calls", mid*64, end*64, calls/2)
	}
}

// TestModule_concurrentCallers never lets two goroutines into one instance: Go's wasm runtime is not
// reentrant, so a shared instance breaks at once.
func TestModule_concurrentCallers(t *testing.T) {
	m := stepsModule(t)
	site, lib, root := fakeSite(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got, _ := wheelsCall(t, m, site, root); got != lib {
					t.Errorf("got %q", got)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := m.idleCount(); n > abi.MaxIdleInstances {
		t.Fatalf("%d idle instances kept, limit %d", n, abi.MaxIdleInstances)
	}
}
