package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestFind_windowsHost runs the real path mapping on a Windows host: directories under
// C:\...\Temp mounted into the builtin steps at /C:/..., candidates mapped back, PE-checked through
// os.Root, the trace in host form, and what the search observed re-checked on the host as the
// result cache does.
func TestFind_windowsHost(t *testing.T) {
	pf, cuda := t.TempDir(), t.TempDir()
	cudnn := filetree.Put(t, pf, `NVIDIA\CUDNN\v9.10\bin\12.9\x64\cudnn64_9.dll`, dllAMD64)
	cudart := filetree.Put(t, cuda, `bin\cudart64_13.dll`, dllAMD64)
	env := testEnv{"ProgramW6432": pf, "CUDA_PATH": filepath.ToSlash(cuda) + "/"}
	seen := map[string][]observe.Observation{}
	for _, tt := range []struct{ name, want, via string }{
		{"cudnn", cudnn, "ProgramFiles"},
		{"cudart", cudart, "CUDA_PATH"},
	} {
		f := newFinder(t, env, "")
		ex, _, obs := f.searchAll(bg, DynamicLib, tt.name, findFirst, f.checkFor(DynamicLib, tt.name, true))
		if ex.Err != nil || ex.Result == nil || ex.Result.Path != tt.want || ex.Result.FoundVia != tt.via {
			t.Fatalf("find %s = %+v, %v; want %s via %s\n%+v", tt.name, ex.Result, ex.Err, tt.want, tt.via, ex.Steps)
		}
		for _, o := range obs {
			if strings.HasPrefix(o.Root, "/") || strings.HasPrefix(o.Path, "/") {
				t.Errorf("find %s observed %+v in guest form", tt.name, o)
			}
		}
		if why := observe.Check(obs, env.get, sandboxfs.See); why != "" {
			t.Fatalf("find %s: its observations do not re-check on the host: %s", tt.name, why)
		}
		seen[tt.name] = obs
		lib, err := f.Find(bg, tt.name)
		if err != nil || lib.Path != tt.want {
			t.Fatalf("Find(%s) = %+v, %v; want %s", tt.name, lib, err, tt.want)
		}
	}
	ex := newFinder(t, env, "").Explain(bg, DynamicLib, "cudart")
	var tried []string
	for _, a := range ex.Attempts() {
		tried = append(tried, a.Path)
	}
	if x64 := filepath.Join(cuda, "bin", "x64"); !slices.Contains(tried, x64) {
		t.Errorf("explain's attempts %q do not hold %s in host form", tried, x64)
	}
	if err := os.Rename(cudart, cudart+".old"); err != nil {
		t.Fatal(err)
	}
	if why := observe.Check(seen["cudart"], env.get, sandboxfs.See); why == "" {
		t.Errorf("cudart moved away, yet its find's observations still hold")
	}
}
