package engine

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// The tests here run a Windows host's path mapping on any host: the directories a step is granted
// have Windows host paths (C:\Program Files, \\fs1\sw\conda) backed by fake trees under t.TempDir(),
// and the real builtin steps run in wasm against them. What a Windows host adds beyond this — that
// os.OpenRoot opens C:\... — is Go's, and the wine run in the report covers it.

var windowsHost = guestpath.For("windows")

// fakeWindowsRoots opens a Windows host path as the fake tree standing for it.
func fakeWindowsRoots(trees map[string]string) func(string, *observe.Recorder) (*os.Root, error) {
	return func(dir string, _ *observe.Recorder) (*os.Root, error) {
		real, ok := trees[dir]
		if !ok {
			return nil, fmt.Errorf("%w (no fake tree for %s)", fs.ErrNotExist, dir)
		}
		return os.OpenRoot(real)
	}
}

// windowsTargetFinder is an Engine searching for windows/amd64 with only env for an environment.
func windowsTargetFinder(t *testing.T, env testEnv, h hooks) *Engine {
	t.Helper()
	env["PATHFINDER_CACHE_DIR"] = sharedCacheDir
	h.engine = testEngine()
	return newFinderOpts(t, Options{Platform: abi.Platform{OS: "windows", Arch: "amd64"}, LookupEnv: env.lookup, SystemConfigDir: t.TempDir(), hooks: h})
}

func TestRun_windowsHostPaths(t *testing.T) {
	tests := []struct {
		name, step, lib string
		env             testEnv
		trees           map[string]map[string][]byte // Windows host dir -> files in its fake tree
		want            string                       // the host path found, "" for none
		wantFoundVia    string
		wantTried       []string // host paths (or names) the step's tried list must hold
		wantLog         string
	}{
		{
			name: "Program Files with a space, newest cuDNN", step: "programfiles", lib: "cudnn",
			env: testEnv{"ProgramW6432": `C:\Program Files`},
			trees: map[string]map[string][]byte{`C:\Program Files`: {
				"NVIDIA/CUDNN/v9.9/bin/12.8/x64/cudnn64_9.dll":  dllAMD64,
				"NVIDIA/CUDNN/v9.10/bin/12.9/x64/cudnn64_9.dll": dllAMD64,
			}},
			want:         `C:\Program Files\NVIDIA\CUDNN\v9.10\bin\12.9\x64\cudnn64_9.dll`,
			wantFoundVia: "ProgramFiles",
		},
		{
			name: "CUDA_PATH with forward slashes and a trailing one", step: "envroots", lib: "cudart",
			env: testEnv{"CUDA_PATH": `D:/CUDA/v13.0/`},
			trees: map[string]map[string][]byte{`D:\CUDA\v13.0`: {
				"bin/cudart64_13.dll": dllAMD64,
			}},
			want:         `D:\CUDA\v13.0\bin\cudart64_13.dll`,
			wantFoundVia: "CUDA_PATH",
			wantTried:    []string{`D:\CUDA\v13.0\bin\x64`},
		},
		{
			name: "CUDA_HOME with the long-path prefix", step: "envroots", lib: "cudart",
			env: testEnv{"CUDA_HOME": `\\?\E:\cuda`},
			trees: map[string]map[string][]byte{`E:\cuda`: {
				"bin/x64/cudart64_12.dll": dllAMD64,
			}},
			want:         `E:\cuda\bin\x64\cudart64_12.dll`,
			wantFoundVia: "CUDA_HOME",
		},
		{
			name: "conda prefix on a UNC share", step: "conda", lib: "cudart",
			env: testEnv{"CONDA_PREFIX": `\\fs1\sw\conda`},
			trees: map[string]map[string][]byte{`\\fs1\sw\conda`: {
				"Library/bin/cudart64_13.dll": dllAMD64,
			}},
			want:         `\\fs1\sw\conda\Library\bin\cudart64_13.dll`,
			wantFoundVia: "conda",
		},
		{
			name: "a device path is not granted, and says why", step: "envroots", lib: "cudart",
			env:       testEnv{"CUDA_PATH": `\\.\pipe\cuda`},
			wantTried: []string{"$CUDA_PATH", "$CUDA_HOME"},
			wantLog:   `not granted $CUDA_PATH: "\\\\.\\pipe\\cuda": a device path`,
		},
		{
			name: "a drive-relative path is refused by the step as relative", step: "envroots", lib: "cudart",
			env:       testEnv{"CUDA_PATH": `C:cuda`},
			wantTried: []string{`C:cuda`},
			wantLog:   `not granted (env:CUDA_PATH): "C:cuda": relative to drive C:`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			real := map[string]string{}
			for dir, files := range tt.trees {
				real[dir] = t.TempDir()
				for rel, data := range files {
					filetree.Put(t, real[dir], rel, data)
				}
			}
			f := windowsTargetFinder(t, tt.env, hooks{paths: &windowsHost, openRoot: fakeWindowsRoots(real)})
			e, ok := f.catalog.Lookup(DynamicLib, tt.lib)
			if !ok {
				t.Fatalf("no %q in the catalog", tt.lib)
			}
			r := &cascade{f: f, ctx: bg, e: e, rec: &observe.Recorder{}}
			st := search.StepTrace{Step: tt.step}
			lib := r.askStep(&st)
			switch {
			case tt.want == "" && lib != nil:
				t.Fatalf("found %s, want nothing; trace %+v", lib.Path, st)
			case tt.want != "" && (lib == nil || lib.Path != tt.want || lib.FoundVia != tt.wantFoundVia):
				t.Fatalf("found %+v, want %s via %s; trace %+v", lib, tt.want, tt.wantFoundVia, st)
			}
			for _, c := range st.Candidates {
				if strings.HasPrefix(c.Path, "/") {
					t.Errorf("candidate %s in the trace is in guest form", c.Path)
				}
			}
			var tried []string
			for _, a := range st.Tried {
				if strings.HasPrefix(a.Path, "/") {
					t.Errorf("tried %s (%s) is in guest form", a.Path, a.Reason)
				}
				tried = append(tried, a.Path)
			}
			for _, w := range tt.wantTried {
				if !slices.Contains(tried, w) {
					t.Errorf("tried %q, want it to hold %s", tried, w)
				}
			}
			if tt.wantLog != "" && !slices.ContainsFunc(st.Log, func(l string) bool { return strings.Contains(l, tt.wantLog) }) {
				t.Errorf("log %q, want a line with %s", st.Log, tt.wantLog)
			}
			// The result cache re-checks what was observed on the host: roots and paths in host form.
			rooted := 0
			for _, o := range r.rec.List() {
				if o.Root == "" {
					continue
				}
				rooted++
				if _, ok := real[o.Root]; !ok || strings.HasPrefix(o.Path, "/") {
					t.Errorf("observation %+v: not under a granted host directory in host form", o)
				}
			}
			if len(tt.trees) > 0 && rooted == 0 {
				t.Errorf("nothing observed inside the granted directories: %+v", r.rec.List())
			}
		})
	}
}

func TestGranted_check_windowsHost(t *testing.T) {
	tree := t.TempDir()
	filetree.Put(t, tree, "CUDNN/v9.10/bin/x64/cudnn64_9.dll", dllAMD64)
	filetree.Put(t, tree, "CUDNN/v9.10/bin/x64/cudnn64_9.dll.txt", []byte("text"))
	root, err := os.OpenRoot(tree)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	const nv = `C:\Program Files\NVIDIA`
	rec := &observe.Recorder{}
	g := &candidate.Granted{Dirs: []candidate.Dir{{Path: nv, Root: root}}, Paths: windowsHost, Rec: rec}
	e := &catalog.Entry{Kind: DynamicLib, Descriptor: abi.Descriptor{Name: "cudnn", WindowsDLLs: []string{"cudnn64_9.dll"}}}
	plat := abi.Platform{OS: "windows", Arch: "amd64"}
	tests := []struct {
		name, guest string
		want        string // the host path, or a part of why it is refused
		refused     bool
	}{
		{"valid", "/C:/Program Files/NVIDIA/CUDNN/v9.10/bin/x64/cudnn64_9.dll", nv + `\CUDNN\v9.10\bin\x64\cudnn64_9.dll`, false},
		{"not PE", "/C:/Program Files/NVIDIA/CUDNN/v9.10/bin/x64/cudnn64_9.dll.txt", "not a PE file", true},
		{"an NTFS stream", "/C:/Program Files/NVIDIA/CUDNN/v9.10/bin/x64/cudnn64_9.dll:evil", "NTFS stream", true},
		{"a backslash climbing out", `/C:/Program Files/NVIDIA/x\..\..\Windows\evil.dll`, "backslash", true},
		{"another drive", "/D:/Program Files/NVIDIA/cudnn64_9.dll", "outside every directory granted", true},
		{"the host form itself", nv + `\CUDNN\v9.10\bin\x64\cudnn64_9.dll`, "not an absolute path", true},
		{"drive case differs", "/c:/Program Files/NVIDIA/CUDNN/v9.10/bin/x64/cudnn64_9.dll", "outside every directory granted", true},
		{"unclean", "/C:/Program Files/NVIDIA/../NVIDIA/cudnn64_9.dll", "not a clean path", true},
		{"missing", "/C:/Program Files/NVIDIA/CUDNN/cudnn64_9.dll", "cannot stat inside " + nv, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, why := check(g, tt.guest, e, plat)
			if tt.refused {
				if why == "" || host != "" || !strings.Contains(why, tt.want) {
					t.Fatalf("check(%q) = %q, %q; want refused with %q", tt.guest, host, why, tt.want)
				}
				return
			}
			if why != "" || host != tt.want {
				t.Fatalf("check(%q) = %q, %q; want %s", tt.guest, host, why, tt.want)
			}
			c, err := g.Open(tt.guest, e, plat)
			if err != nil || c.File == nil || c.Host != host {
				t.Fatalf("Open(%q) = %+v, %v: validation did not keep %s open for the load", tt.guest, c, err, host)
			}
			c.Close()
		})
	}
	for _, o := range rec.List() {
		if o.Root != nv {
			t.Errorf("validation observed %+v: want the root in host form %s", o, nv)
		}
	}
}

func TestHostToolkitRoot(t *testing.T) {
	tests := []struct {
		name string
		m    guestpath.Map
		lib  string
		want string
	}{
		{"unix lib64", guestpath.For("linux"), "/usr/local/cuda-13.0/lib64/libcudart.so.13", "/usr/local/cuda-13.0"},
		{"unix targets", guestpath.For("linux"), "/opt/cuda/targets/x86_64-linux/lib/libcudart.so.13", "/opt/cuda"},
		{"windows bin/x64", windowsHost, `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v13.0\bin\x64\cudart64_13.dll`, `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v13.0`},
		{"windows unc bin", windowsHost, `\\fs1\sw\cuda\bin\cudart64_13.dll`, `\\fs1\sw\cuda`},
		{"windows drive root bin: a whole drive is no toolkit", windowsHost, `C:\bin\cudart64_13.dll`, ""},
		{"windows share root bin: a whole share is no toolkit", windowsHost, `\\fs1\sw\bin\cudart64_13.dll`, ""},
		{"windows no toolkit layout", windowsHost, `C:\Windows\System32\nvcuda.dll`, ""},
		{"windows device path", windowsHost, `\\.\C:\cuda\bin\cudart64_13.dll`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.m.ToolkitRoot(tt.lib)
			if ok != (tt.want != "") || got != tt.want {
				t.Fatalf("ToolkitRoot(%q) = %q, %v; want %q", tt.lib, got, ok, tt.want)
			}
		})
	}
}

func TestHostTried(t *testing.T) {
	in := []abi.Attempt{
		{Path: "/C:/CUDA/bin/x64", Reason: "no such directory"},
		{Path: "$CUDA_PATH", Reason: "not set"},
		{Path: "cudart64_13.dll", Reason: "not loaded"},
		{Path: "/UNC/fs1/sw/conda/Library/bin", Reason: "none of cudart64_13.dll"},
		{Path: "/usr/lib", Reason: "not a Windows path: kept as the plugin said it"},
	}
	want := []string{`C:\CUDA\bin\x64`, "$CUDA_PATH", "cudart64_13.dll", `\\fs1\sw\conda\Library\bin`, "/usr/lib"}
	got := hostTried(windowsHost, "envroots", in)
	for i := range want {
		if got[i].Path != want[i] || got[i].Reason != in[i].Reason || got[i].Step != "envroots" {
			t.Errorf("hostTried[%d] = %+v, want path %s from envroots", i, got[i], want[i])
		}
	}
	if in[0].Path != "/C:/CUDA/bin/x64" {
		t.Errorf("hostTried changed the plugin's response in place")
	}
	for i, a := range hostTried(guestpath.For("linux"), "envroots", in) {
		if a.Path != in[i].Path || a.Reason != in[i].Reason {
			t.Errorf("on a Unix host, tried[%d] = %+v; want it as the plugin said it, %+v", i, a, in[i])
		}
	}
}
