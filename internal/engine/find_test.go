package engine

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakeelf"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestFind_searchOrder(t *testing.T) {
	type file struct{ root, rel, soname string }
	tests := []struct {
		name     string
		files    []file            // root is a key of the roots below
		env      map[string]string // values may name roots as {root}
		lib      string
		want     file
		foundVia string
		step     string
	}{
		{
			name:  "cu13 in a later site dir beats the cu12 layout in the first",
			files: []file{{"site1", "nvidia/cuda_runtime/lib/libcudart.so.12", "libcudart.so.12"}, {"site2", "nvidia/cu13/lib/libcudart.so.13", "libcudart.so.13"}},
			env:   map[string]string{"PATHFINDER_SITE_PACKAGES": "{site1}:{site2}"},
			lib:   "cudart", want: file{"site2", "nvidia/cu13/lib/libcudart.so.13", ""}, foundVia: "site-packages", step: "wheels",
		},
		{
			name:  "newest declared soname first in one directory",
			files: []file{{"site1", "nvidia/cu13/lib/libnvrtc.so.12", "libnvrtc.so.12"}, {"site1", "nvidia/cu13/lib/libnvrtc.so.13", "libnvrtc.so.13"}},
			env:   map[string]string{"PATHFINDER_SITE_PACKAGES": "{site1}"},
			lib:   "nvrtc", want: file{"site1", "nvidia/cu13/lib/libnvrtc.so.13", ""}, foundVia: "site-packages", step: "wheels",
		},
		{
			name:  "conda before CUDA_HOME",
			files: []file{{"conda", "lib/libcurand.so.10", "libcurand.so.10"}, {"cuda", "lib64/libcurand.so.10", "libcurand.so.10"}},
			env:   map[string]string{"CONDA_PREFIX": "{conda}", "CUDA_HOME": "{cuda}"},
			lib:   "curand", want: file{"conda", "lib/libcurand.so.10", ""}, foundVia: "conda", step: "conda",
		},
		{
			name:  "CUDA_PATH before CUDA_HOME",
			files: []file{{"cudapath", "lib64/libcufft.so.12", "libcufft.so.12"}, {"cuda", "lib64/libcufft.so.12", "libcufft.so.12"}},
			env:   map[string]string{"CUDA_PATH": "{cudapath}", "CUDA_HOME": "{cuda}"},
			lib:   "cufft", want: file{"cudapath", "lib64/libcufft.so.12", ""}, foundVia: "CUDA_PATH", step: "envroots",
		},
		{
			name:  "every anchor dir is tried: lib64 exists without the library, lib has it",
			files: []file{{"cuda", "lib64/libother.so", "libother.so"}, {"cuda", "lib/libnppc.so.13", "libnppc.so.13"}},
			env:   map[string]string{"CUDA_HOME": "{cuda}"},
			lib:   "nppc", want: file{"cuda", "lib/libnppc.so.13", ""}, foundVia: "CUDA_HOME", step: "envroots",
		},
		{
			name:  "install-root variable named by the descriptor, labelled by its name",
			files: []file{{"cudnn", "lib/libcudnn.so.9", "libcudnn.so.9"}, {"cuda", "lib64/libcudnn.so.9", "libcudnn.so.9"}},
			env:   map[string]string{"CUDNN_PATH": "{cudnn}", "CUDA_HOME": "{cuda}"},
			lib:   "cudnn", want: file{"cudnn", "lib/libcudnn.so.9", ""}, foundVia: "CUDNN_PATH", step: "envroots",
		},
		{
			name:  "NCCL_HOME with build/lib",
			files: []file{{"nccl", "build/lib/libnccl.so.2", "libnccl.so.2"}},
			env:   map[string]string{"NCCL_HOME": "{nccl}"},
			lib:   "nccl", want: file{"nccl", "build/lib/libnccl.so.2", ""}, foundVia: "NCCL_HOME", step: "envroots",
		},
		{
			name:  "a 32-bit library in a wheel is refused and conda's is taken",
			files: []file{{"site1", "nvidia/cu13/lib/libnvJitLink.so.13", "32"}, {"conda", "lib/libnvJitLink.so.13", "libnvJitLink.so.13"}},
			env:   map[string]string{"PATHFINDER_SITE_PACKAGES": "{site1}", "CONDA_PREFIX": "{conda}"},
			lib:   "nvJitLink", want: file{"conda", "lib/libnvJitLink.so.13", ""}, foundVia: "conda", step: "conda",
		},
		{
			name:  "a file that is not ELF is refused and the next name is tried",
			files: []file{{"cuda", "lib64/libnvjpeg.so.13", "text"}, {"cuda", "lib64/libnvjpeg.so.12", "libnvjpeg.so.12"}},
			env:   map[string]string{"CUDA_HOME": "{cuda}"},
			lib:   "nvjpeg", want: file{"cuda", "lib64/libnvjpeg.so.12", ""}, foundVia: "CUDA_HOME", step: "envroots",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			roots := map[string]string{}
			root := func(k string) string {
				if roots[k] == "" {
					roots[k] = t.TempDir()
				}
				return roots[k]
			}
			for _, f := range tt.files {
				var data []byte
				switch f.soname {
				case "32":
					data = fakeelf.Header(elf.ELFCLASS32, elf.EM_386, elf.ET_DYN)
				case "text":
					data = []byte("INPUT(-lfoo)\n")
				default:
					data = elfLib(t, f.soname)
				}
				filetree.Put(t, root(f.root), f.rel, data)
			}
			env := testEnv{}
			for k, v := range tt.env {
				for name := range roots {
					v = strings.ReplaceAll(v, "{"+name+"}", roots[name])
				}
				env[k] = v
			}
			f := newFinder(t, env, "")
			lib, err := f.Find(bg, tt.lib)
			if err != nil {
				t.Fatalf("Find(%q): %v\n%s", tt.lib, err, dump(f.Explain(bg, DynamicLib, tt.lib)))
			}
			want := filepath.Join(root(tt.want.root), tt.want.rel)
			if lib.Path != want || lib.FoundVia != tt.foundVia || lib.Step != tt.step || lib.Kind != search.DynamicLib || lib.Name != tt.lib {
				t.Fatalf("Find(%q) = %+v, want path %s via %s step %s", tt.lib, lib, want, tt.foundVia, tt.step)
			}
		})
	}
}

func TestFind_Errors(t *testing.T) {
	tests := []struct {
		name    string
		env     testEnv
		lib     string
		is      error
		message string
		reason  string // some attempt's reason contains it
	}{
		{name: "unknown name lists close matches", lib: "cublass", is: ErrUnknown, message: `unknown library "cublass" (did you mean "cublas"`},
		{name: "case is a close match", lib: "CUDART", is: ErrUnknown, message: `did you mean "cudart"`},
		{name: "relative CUDA_HOME is refused", env: testEnv{"CUDA_HOME": "relative/cuda"}, lib: "curand", is: ErrNotFound,
			message: `"curand" not found: looked for libcurand.so.10`, reason: "relative path: refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFinder(t, tt.env, "")
			_, err := f.Find(bg, tt.lib)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Find(%q) error %v, want %v", tt.lib, err, tt.is)
			}
			var se *SearchError
			if !errors.As(err, &se) || se.Name != tt.lib {
				t.Fatalf("error %v is not a *SearchError for %q", err, tt.lib)
			}
			if !strings.Contains(err.Error(), tt.message) || strings.HasPrefix(err.Error(), "pathfinder: ") {
				t.Fatalf("message %q lacks %q, or has the program's prefix (the command adds it)", err, tt.message)
			}
			if tt.reason != "" {
				var reasons []string
				for _, a := range se.Attempts {
					reasons = append(reasons, a.Step+": "+a.Path+": "+a.Reason)
				}
				if !strings.Contains(strings.Join(reasons, "\n"), tt.reason) {
					t.Fatalf("no attempt says %q:\n%s", tt.reason, strings.Join(reasons, "\n"))
				}
			}
		})
	}
}

func TestFind_notAvailable(t *testing.T) {
	f := newFinder(t, nil, "")
	f.platform = abi.Platform{OS: "windows", Arch: "amd64"}
	_, err := f.Find(bg, "cufile")
	if !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), `"cufile" is not available on windows/amd64`) {
		t.Fatalf("got %v", err)
	}
}

func TestFind_driverLibrariesSkipPackagedSteps(t *testing.T) {
	cuda := t.TempDir()
	filetree.Put(t, cuda, "lib64/libcuda.so.1", elfLib(t, "libcuda.so.1"))
	f := newFinder(t, testEnv{"CUDA_HOME": cuda}, "")
	ex := f.Explain(bg, DynamicLib, "cuda")
	var steps []string
	for _, st := range ex.Steps {
		steps = append(steps, st.Step)
	}
	if got := strings.Join(steps, ","); got != "already-loaded,system" {
		t.Fatalf("steps %s, want already-loaded,system", got)
	}
	if ex.Result != nil && strings.HasPrefix(ex.Result.Path, cuda) {
		t.Fatalf("driver library taken from CUDA_HOME: %s", ex.Result.Path)
	}
}

func TestFind_oneSearchPerName(t *testing.T) {
	site := t.TempDir()
	filetree.Put(t, site, "nvidia/cu13/lib/libcusolver.so.12", elfLib(t, "libcusolver.so.12"))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site}, "")
	var wg sync.WaitGroup
	paths := make([]string, 64)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lib, err := f.Find(bg, "cusolver")
			if err != nil {
				t.Error(err)
				return
			}
			paths[i] = lib.Path
		}()
	}
	wg.Wait()
	if n := f.searches.Load(); n != 1 {
		t.Fatalf("%d searches for 64 concurrent callers, want 1", n)
	}
	for _, p := range paths {
		if p != paths[0] || p == "" {
			t.Fatalf("callers disagree: %q vs %q", p, paths[0])
		}
	}
	// Remembered: no new search.
	if _, err := f.Find(bg, "cusolver"); err != nil || f.searches.Load() != 1 {
		t.Fatalf("second Find searched again (%d) or failed: %v", f.searches.Load(), err)
	}
}

func TestGranted_validate(t *testing.T) {
	dir := t.TempDir()
	lib := filetree.Put(t, dir, "lib64/libx.so.1", elfLib(t, "libx.so.1"))
	stub := filetree.Put(t, dir, "lib64/stubs/libcuda.so", elfLib(t, "libcuda.so.1"))
	filetree.Put(t, dir, "lib64/sub/keep", nil)
	exe := filetree.Put(t, dir, "bin/tool", nil)
	outside := filetree.Put(t, t.TempDir(), "libout.so.1", elfLib(t, "libout.so.1"))
	// Named like the library, but another library by its DT_SONAME, and an executable built as PIE
	// (which is ET_DYN too): the loader would take the first under a false name, refuse the second.
	impostor := filetree.Put(t, dir, "lib64/libx.so.2", elfLib(t, "libevil.so.1"))
	pie := filetree.Put(t, dir, "lib64/libx.so.3", pieExecutable(t))
	filetree.Symlink(t, outside, dir+"/lib64/libout.so.1")
	f := newFinder(t, nil, "")
	root, err := f.openRoot(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := &candidate.Granted{Dirs: []candidate.Dir{{Path: dir, Root: root}}}
	linux := abi.Platform{OS: "linux", Arch: "amd64"}
	tests := []struct {
		name, path, want string
		plat             abi.Platform
	}{
		{"valid", lib, "", linux},
		{"stubs", stub, "stubs/", linux},
		{"relative", "lib64/libx.so.1", "not an absolute path", linux},
		{"dot-dot", dir + "/lib64/../lib64/libx.so.1", "not a clean path", linux},
		{"outside", "/etc/passwd", "outside every directory granted", linux},
		{"nul", lib + "\x00", "NUL", linux},
		{"long", "/" + strings.Repeat("a", 5000), "longer than 4096", linux},
		{"directory", dir + "/lib64/sub", "not a regular file", linux},
		{"missing", dir + "/lib64/libnope.so", "no such file", linux},
		// Checked where it leads, as any candidate: there, it is another library.
		{"symlink out of the root", dir + "/lib64/libout.so.1", `its DT_SONAME is "libout.so.1"`, linux},
		{"empty file", exe, "not an ELF file", linux},
		{"other machine", lib, "not arm64", abi.Platform{OS: "linux", Arch: "arm64"}},
		{"another DT_SONAME", impostor, `its DT_SONAME is "libevil.so.1", not one of the names declared for "x" (libx.so.1, libx.so.2, libx.so.3)`, linux},
		{"a PIE executable", pie, "a position-independent executable, not a shared library", linux},
	}
	e := &catalog.Entry{Kind: DynamicLib, Descriptor: abi.Descriptor{Name: "x", LinuxSonames: []string{"libx.so.1", "libx.so.2", "libx.so.3"}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := check(g, tt.path, e, tt.plat)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("check(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestFind_systemSearchModel(t *testing.T) {
	dir := t.TempDir()
	want := filetree.Put(t, dir, "libcuda.so.1", elfLib(t, "libcuda.so.1"))
	filetree.Put(t, dir, "stubs/libnvidia-ml.so.1", elfLib(t, "libnvidia-ml.so.1"))
	f := newFinder(t, testEnv{"LD_LIBRARY_PATH": dir + ":" + dir + "/stubs"}, "")
	lib, err := f.Find(bg, "cuda")
	if err != nil || lib.Path != want || lib.FoundVia != "system-search" || lib.Step != "system" {
		t.Fatalf("Find(cuda) = %+v, %v; want %s via system-search", lib, err, want)
	}
	if lib, err := f.Find(bg, "nvml"); err == nil {
		t.Fatalf("Find(nvml) took a stubs/ library: %+v", lib)
	}
}

// TestExplanation_JSON: an explanation's JSON carries its error's code and message, and leaves out
// what is empty, as find --json does.
func TestExplanation_JSON(t *testing.T) {
	site := t.TempDir()
	filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site}, "")
	tests := []struct {
		name, lib string
		want      map[string]any // keys and, where not nil, their values
		absent    []string
	}{
		{"unknown", "cudartt", map[string]any{"name": "cudartt", "error": "unknown", "message": `unknown library "cudartt" (did you mean "cudart" or "cuda"?)`},
			[]string{"steps", "result"}},
		{"not found", "nvrtc", map[string]any{"error": "not-found", "message": nil, "steps": nil}, []string{"result"}},
		{"found", "cudart", map[string]any{"result": nil, "steps": nil}, []string{"error", "message"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(f.Explain(bg, DynamicLib, tt.lib))
			var got map[string]any
			if err != nil || json.Unmarshal(b, &got) != nil {
				t.Fatalf("%s: %v", b, err)
			}
			for k, v := range tt.want {
				if g, ok := got[k]; !ok || v != nil && g != v {
					t.Errorf("%s = %v, want %v in %s", k, g, v, b)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present in %s", k, b)
				}
			}
		})
	}
}
