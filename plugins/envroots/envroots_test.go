package envroots

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/internal/steptest"
)

func TestSearch(t *testing.T) {
	elf := &fstest.MapFile{Data: []byte("\x7fELF")}
	cudnn := abi.Descriptor{
		Name:               "cudnn",
		LinuxSonames:       []string{"libcudnn.so.9"},
		AnchorRelDirsLinux: []string{"lib64", "lib"},
		InstallRootEnvVars: []string{"CUDNN_PATH"},
		InstallRootRelDirs: []string{"lib", "lib64"},
	}
	tests := []struct {
		name    string
		env     map[string]string
		files   fstest.MapFS
		want    []string
		tried   string // some attempt reason contains it
		ignored string // the variables reported as passed over
	}{
		{
			name:  "install root first, then CUDA_PATH",
			env:   map[string]string{"CUDNN_PATH": "/cudnn", "CUDA_PATH": "/cuda"},
			files: fstest.MapFS{"cudnn/lib/libcudnn.so.9": elf, "cuda/lib64/libcudnn.so.9": elf},
			want:  []string{"/cudnn/lib/libcudnn.so.9", "/cuda/lib64/libcudnn.so.9"},
		},
		{
			name:    "CUDA_PATH hides CUDA_HOME",
			env:     map[string]string{"CUDA_PATH": "/cuda", "CUDA_HOME": "/home"},
			files:   fstest.MapFS{"home/lib64/libcudnn.so.9": elf},
			want:    nil,
			ignored: "CUDA_HOME",
		},
		{
			name:  "CUDA_HOME naming CUDA_PATH's directory is not passed over",
			env:   map[string]string{"CUDA_PATH": "/cuda", "CUDA_HOME": "/cuda/"},
			files: fstest.MapFS{"cuda/lib64/libcudnn.so.9": elf},
			want:  []string{"/cuda/lib64/libcudnn.so.9"},
		},
		{
			name:  "CUDA_HOME when CUDA_PATH is unset; every anchor dir",
			env:   map[string]string{"CUDA_HOME": "/home"},
			files: fstest.MapFS{"home/lib64/other": elf, "home/lib/libcudnn.so.9": elf},
			want:  []string{"/home/lib/libcudnn.so.9"},
		},
		{
			name:  "relative values are refused",
			env:   map[string]string{"CUDNN_PATH": "cudnn", "CUDA_HOME": "./cuda"},
			files: fstest.MapFS{"cudnn/lib/libcudnn.so.9": elf},
			tried: "relative path: refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := abi.Env{FS: tt.files, Getenv: func(k string) string { return tt.env[k] }}
			resp := Search(env, &abi.Request{ABI: abi.Version, Platform: abi.Platform{OS: "linux", Arch: "amd64"}, Library: cudnn})
			var got []string
			for _, c := range resp.Candidates {
				got = append(got, c.Path)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("candidates %v, want %v (tried %+v)", got, tt.want, resp.Tried)
			}
			var ignored []string
			for _, in := range resp.Ignored {
				ignored = append(ignored, in.Var)
			}
			if strings.Join(ignored, " ") != tt.ignored {
				t.Fatalf("ignored %+v, want %q", resp.Ignored, tt.ignored)
			}
			if tt.tried != "" {
				var reasons []string
				for _, a := range resp.Tried {
					reasons = append(reasons, a.Reason)
				}
				if !strings.Contains(strings.Join(reasons, "\n"), tt.tried) {
					t.Fatalf("tried %v lacks %q", reasons, tt.tried)
				}
			}
		})
	}
}

// TestSearch_windowsArch: a toolkit root through CUDA_PATH, with the builtin pack's Windows layouts,
// in the Go reference and in the C the builtin module ships: bin/x64 or bin/arm64, then bin;
// cudadevrt in lib/x64 or lib/arm64; cuDLA in bin/arm64, and on arm64 only.
func TestSearch_windowsArch(t *testing.T) {
	cuda := steptest.Tree(t, "bin/x64/cudart64_13.dll", "bin/arm64/cudart64_13.dll", "bin/cudart64_12.dll",
		"lib/x64/cudadevrt.lib", "lib/arm64/cudadevrt.lib", "lib/cudadevrt.lib", "bin/arm64/cudla.dll", "bin/cudla.dll")
	x64, arm64 := abi.Platform{OS: "windows", Arch: "amd64"}, abi.Platform{OS: "windows", Arch: "arm64"}
	tests := []struct {
		name string
		kind abi.Kind
		lib  string
		plat abi.Platform
		want []string
	}{
		{"cudart x64", abi.KindDynamicLib, "cudart", x64, []string{"/bin/x64/cudart64_13.dll", "/bin/cudart64_12.dll"}},
		{"cudart arm64", abi.KindDynamicLib, "cudart", arm64, []string{"/bin/arm64/cudart64_13.dll", "/bin/cudart64_12.dll"}},
		{"cudadevrt x64", abi.KindStaticLib, "cudadevrt", x64, []string{"/lib/x64/cudadevrt.lib"}},
		{"cudadevrt arm64", abi.KindStaticLib, "cudadevrt", arm64, []string{"/lib/arm64/cudadevrt.lib"}},
		{"cudla arm64: bin/arm64 only", abi.KindDynamicLib, "cudla", arm64, []string{"/bin/arm64/cudla.dll"}},
		{"cudla x64: not on this platform", abi.KindDynamicLib, "cudla", x64, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &abi.Request{Kind: tt.kind, Platform: tt.plat, Library: steptest.PackLibrary(t, tt.kind, tt.lib)}
			steptest.WantBoth(t, Plugin, cuda, map[string]string{"CUDA_PATH": cuda}, req, tt.want)
		})
	}
}

// TestSearch_windowsInstallRoots: CUDNN_PATH on Windows is searched where cuDNN's archives put the
// DLL, as cuda.pathfinder's install_root_env_rel_dirs_windows says: bin on x64, bin/arm64 on arm64,
// never the Linux lib and lib64 (before, the only ones searched); its headers in include on both.
func TestSearch_windowsInstallRoots(t *testing.T) {
	cudnn := steptest.Tree(t, "bin/cudnn64_9.dll", "bin/arm64/cudnn64_9.dll", "lib/cudnn64_9.dll", "lib64/cudnn64_9.dll", "include/cudnn.h")
	x64, arm64 := abi.Platform{OS: "windows", Arch: "amd64"}, abi.Platform{OS: "windows", Arch: "arm64"}
	tests := []struct {
		name string
		kind abi.Kind
		plat abi.Platform
		want []string
	}{
		{"x64", abi.KindDynamicLib, x64, []string{"/bin/cudnn64_9.dll"}},
		{"arm64", abi.KindDynamicLib, arm64, []string{"/bin/arm64/cudnn64_9.dll"}},
		{"headers", abi.KindHeaderDir, x64, []string{"/include"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &abi.Request{Kind: tt.kind, Platform: tt.plat, Library: steptest.PackLibrary(t, tt.kind, "cudnn")}
			steptest.WantBoth(t, Plugin, cudnn, map[string]string{"CUDNN_PATH": cudnn}, req, tt.want)
		})
	}
}
