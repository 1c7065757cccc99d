package wasm

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
)

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
