package abi

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestToolkitRoot(t *testing.T) {
	tests := []struct {
		path, root string
		ok         bool
	}{
		{"/usr/local/cuda-12.8/lib64/libcudart.so.12", "/usr/local/cuda-12.8", true},
		{"/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13", "/usr/local/cuda", true},
		{"/opt/conda/targets/sbsa-linux/lib64/libcudart.so.13", "/opt/conda", true},
		{"/opt/conda/lib/libcudart.so.12", "/opt/conda", true},
		{"/c/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.0/bin/x64/cudart64_13.dll", "/c/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.0", true},
		{"/cuda/bin/cudart64_12.dll", "/cuda", true},
		{"/usr/lib/x86_64-linux-gnu/libcudart.so.12", "", false},
		{"/lib/libcudart.so.12", "", false},
	}
	for _, tt := range tests {
		root, ok := ToolkitRoot(tt.path)
		if root != tt.root || ok != tt.ok {
			t.Errorf("ToolkitRoot(%q) = %q, %v; want %q, %v", tt.path, root, ok, tt.root, tt.ok)
		}
	}
}

// TestLibrary_windowsArch: on windows/arm64 the _arm64 lists replace the x64 ones where declared,
// "{triple}" is x64 or arm64, and supported_windows_arch makes a library absent on the other one.
func TestLibrary_windowsArch(t *testing.T) {
	cudart := Descriptor{
		WindowsDLLs: []string{"cudart64_13.dll"}, SitePackagesWindows: []string{"nvidia/cu13/bin/x86_64", "nvidia/cuda_runtime/bin"},
		SitePackagesWindowsArm64: []string{"nvidia/cu13/bin/arm64"}, AnchorRelDirsWindows: []string{"bin/{triple}", "bin"},
	}
	devrt := Descriptor{
		WindowsFiles: []string{"cudadevrt.lib"}, AnchorRelDirsWindows: []string{"lib/{triple}"},
		CondaRelDirsWindows: []string{"Library/lib/x64", "Library/lib"}, CondaRelDirsWindowsArm64: []string{"Library/lib/arm64"},
	}
	cudla := Descriptor{LinuxSonames: []string{"libcudla.so.1"}, WindowsDLLs: []string{"cudla.dll"}, SupportedWindowsArch: []string{"arm64"}, AnchorRelDirsWindows: []string{"bin/arm64"}}
	x64, arm64, linuxArm := Platform{OS: "windows", Arch: "amd64"}, Platform{OS: "windows", Arch: "arm64"}, Platform{OS: "linux", Arch: "arm64"}
	join := func(s []string) string { return strings.Join(s, " ") }
	tests := []struct {
		name string
		got  []string
		want string
	}{
		{"cudart site-packages on x64: cu13 x86_64, then the CUDA 12 wheel", cudart.SitePackagesDirs(x64), "nvidia/cu13/bin/x86_64 nvidia/cuda_runtime/bin"},
		{"cudart site-packages on arm64: cu13 arm64 only", cudart.SitePackagesDirs(arm64), "nvidia/cu13/bin/arm64"},
		{"cudart toolkit on x64", cudart.AnchorDirs(x64), "bin/x64 bin"},
		{"cudart toolkit on arm64", cudart.AnchorDirs(arm64), "bin/arm64 bin"},
		{"cudart conda on arm64: the toolkit dirs under Library", cudart.CondaDirs(arm64), "Library/bin/arm64 Library/bin"},
		{"cudadevrt toolkit on arm64", devrt.AnchorDirs(arm64), "lib/arm64"},
		{"cudadevrt conda on x64", devrt.CondaDirs(x64), "Library/lib/x64 Library/lib"},
		{"cudadevrt conda on arm64", devrt.CondaDirs(arm64), "Library/lib/arm64"},
		{"cudla on arm64", cudla.FileNames(arm64), "cudla.dll"},
		{"cudla on x64: none", cudla.FileNames(x64), ""},
		{"cudla on linux/arm64: the arch list is Windows'", cudla.FileNames(linuxArm), "libcudla.so.1"},
		{"no supported_windows_arch: every Windows arch", cudart.FileNames(arm64), "cudart64_13.dll"},
	}
	for _, tt := range tests {
		if got := join(tt.got); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestLibrary_datingOffTheWire: the catalog's dating facts stay in the host; a plugin's request
// is what it was without them.
func TestLibrary_datingOffTheWire(t *testing.T) {
	plain := Descriptor{Name: "cufft", LinuxSonames: []string{"libcufft.so.12"}}
	dated := plain
	dated.CUDAMajors, dated.VersionedAsCUDA = map[string]string{"libcufft.so.12": "13"}, true
	a, _ := json.Marshal(Request{Library: plain})
	b, err := json.Marshal(Request{Library: dated})
	if err != nil || string(a) != string(b) {
		t.Fatalf("the request with cuda_majors and versioned_as_cuda (%v):\n%s\nwithout them:\n%s", err, b, a)
	}
}

// TestFind_holding: a directory that holds none of the names is recorded with what it does hold, as
// cuda.pathfinder's error lists it, up to MaxListed names; an empty one says so.
func TestFind_holding(t *testing.T) {
	files := fstest.MapFS{"cuda/lib64/README.txt": {}, "empty": {Mode: fs.ModeDir}}
	for i := range MaxListed + 3 {
		files[fmt.Sprintf("crowded/f%02d", i)] = &fstest.MapFile{}
	}
	req := &Request{Kind: KindStaticLib, Platform: Platform{OS: "linux", Arch: "amd64"}, Library: Descriptor{LinuxFiles: []string{"libcudadevrt.a"}}}
	resp := &Response{}
	Find(Env{FS: files}, req, resp, []string{"/cuda/lib64", "/empty", "/crowded", "/none"})
	want := []Attempt{
		{"/cuda/lib64", "none of libcudadevrt.a; it holds README.txt"},
		{"/empty", "none of libcudadevrt.a; it is empty"},
		{"/crowded", "none of libcudadevrt.a; it holds f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, and 3 more"},
		{"/none", "no such directory"},
	}
	if !slices.Equal(resp.Tried, want) {
		t.Fatalf("tried %q\nwant  %q", resp.Tried, want)
	}
}

// TestFileNames_callersOwn: the names are the caller's to change, with extra files or without; a
// change never reaches the descriptor (the catalog's, for the life of the process).
func TestFileNames_callersOwn(t *testing.T) {
	linux, windows := Platform{OS: "linux", Arch: "amd64"}, Platform{OS: "windows", Arch: "amd64"}
	for _, d := range []*Descriptor{
		{LinuxSonames: []string{"libcudart.so.13", "libcudart.so.12"}, WindowsDLLs: []string{"cudart64_13.dll"}},
		{LinuxSonames: []string{"libnvvm.so.4"}, LinuxFiles: []string{"libnvvm.so"}, WindowsDLLs: []string{"nvvm64_40_0.dll"}, WindowsFiles: []string{"nvvm.dll"}},
	} {
		for _, p := range []Platform{linux, windows} {
			want := slices.Clone(d.FileNames(p))
			d.FileNames(p)[0] = "changed"
			if got := d.FileNames(p); !slices.Equal(got, want) {
				t.Errorf("%s: after a caller's change, FileNames = %v, want %v", p, got, want)
			}
		}
	}
	if got := (&Descriptor{}).FileNames(linux); got != nil {
		t.Errorf("no names: %#v, want nil", got)
	}
}
