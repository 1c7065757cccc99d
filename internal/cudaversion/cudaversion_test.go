package cudaversion

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestOf: the most trusted source that dates the artifact answers; where none does, Looked says
// what each source said.
func TestOf(t *testing.T) {
	const sp = "venv/lib/python3.12/site-packages"
	wheel := installed(sp, "nvidia-cuda-runtime-cu12", "12.4.127", "nvidia/cuda_runtime/lib/libcudart.so.12")
	tests := []struct {
		name       string
		files      map[string]string
		path, real string
		lib        *abi.Descriptor
		platform   abi.Platform
		install    Source
		want       Answer // Detail and Looked: what they begin with
	}{
		{
			name: "a toolkit before its file name", lib: cudart,
			files: map[string]string{"cuda/version.json": versionJSON124, "cuda/lib64/libcudart.so.12.4.127": "ELF", "cuda/lib64/libcudart.so.12": "-> libcudart.so.12.4.127"},
			path:  "cuda/lib64/libcudart.so.12", real: "cuda/lib64/libcudart.so.12.4.127",
			want: Answer{CUDA: "12.4", Version: "12.4.127", From: Toolkit, Detail: "<root>/cuda/version.json"},
		},
		{
			name: "a wheel", lib: cudart, files: wheel, path: sp + "/nvidia/cuda_runtime/lib/libcudart.so.12",
			want: Answer{CUDA: "12.4", Version: "12.4.127", From: Wheel, Detail: "<root>/" + sp + "/nvidia_cuda_runtime_cu12-12.4.127.dist-info"},
		},
		{
			name: "a file name", lib: cudart, files: map[string]string{"usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127": "ELF"},
			path: "usr/lib/x86_64-linux-gnu/libcudart.so.12", real: "usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127",
			want: Answer{CUDA: "12.4", Version: "12.4.127", From: FileName, Detail: "<root>/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127"},
		},
		{
			name: "a DLL's version resource before the catalog", lib: cudart, platform: windows,
			files: map[string]string{"bin/cudart64_12.dll": dll([4]uint16{6, 14, 11, 12080}, "6.14.11.12080")}, path: "bin/cudart64_12.dll",
			want: Answer{CUDA: "12.8", From: VersionInfo, Detail: "<root>/bin/cudart64_12.dll: VS_VERSIONINFO"},
		},
		{
			name: "the catalog last", lib: cufft, files: map[string]string{"opt/libcufft.so.12": "ELF"}, path: "opt/libcufft.so.12",
			want: Answer{CUDA: "13", From: Catalog, Detail: "the catalog: libcufft.so.12 is CUDA 13's"},
		},
		{
			name: "nothing says", lib: cudnn, files: map[string]string{"usr/lib/x86_64-linux-gnu/libcudnn.so.9": "ELF"}, path: "usr/lib/x86_64-linux-gnu/libcudnn.so.9",
			want: Answer{Looked: []string{
				"toolkit: <root>/usr/lib/x86_64-linux-gnu lie in no toolkit root's layout",
				"wheel: <root>/usr/lib/x86_64-linux-gnu is in none of cudnn's site-packages directories",
				"conda: <root>/usr/lib/x86_64-linux-gnu is in none of cudnn's conda directories",
				"file-name: libcudnn.so.9 is no declared soname with a full version",
				"version-info: only a Windows DLL has a VS_VERSIONINFO to read",
				"catalog: the catalog gives no CUDA major for libcudnn.so.9",
			}},
		},
		{
			name: "the driver's library belongs to no toolkit", lib: &abi.Descriptor{Name: "cuda", PackagedWith: "driver", LinuxSonames: []string{"libcuda.so.1"}},
			files: map[string]string{"usr/include/cuda.h": cudaH124, "usr/lib64/libcuda.so.1": "ELF"}, path: "usr/lib64/libcuda.so.1",
			want: Answer{Looked: []string{"cuda comes with the driver, not with a CUDA toolkit"}},
		},
		{
			name: "no descriptor", want: Answer{Looked: []string{"no descriptor to date it by"}},
		},
		{
			// A file the search found in a site-packages directory was installed by a wheel: a
			// toolkit's version.json around it is not asked, nor conda's records.
			name: "installed by a wheel: the toolkit not asked", lib: cudart, install: Wheel,
			files: map[string]string{"cuda/version.json": versionJSON124, "cuda/lib64/libcudart.so.12": "ELF"}, path: "cuda/lib64/libcudart.so.12",
			want: Answer{CUDA: "12", From: Catalog, Detail: "the catalog: libcudart.so.12 is CUDA 12's"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filetree.New(t, tt.files)
			a := Artifact{Path: filepath.Join(root, tt.path), Kind: abi.KindDynamicLib, Library: tt.lib, Platform: tt.platform, Install: tt.install}
			if tt.real != "" {
				a.Real = filepath.Join(root, tt.real)
			}
			if a.Platform.OS == "" {
				a.Platform = linux
			}
			got := Of(a, nil)
			want := tt.want
			fill := func(s string) string { return strings.ReplaceAll(s, "<root>", root) }
			ok := got.CUDA == want.CUDA && got.Version == want.Version && got.From == want.From &&
				strings.HasPrefix(got.Detail, fill(want.Detail)) && len(got.Looked) == len(want.Looked)
			for i := range want.Looked {
				ok = ok && strings.HasPrefix(got.Looked[i], fill(want.Looked[i]))
			}
			if !ok {
				t.Errorf("Of:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestOf_observations: what Of read is recorded, absences too, so that a cached answer is made
// again when a toolkit's version.json appears or changes, a wheel is installed beside, or a
// conda package is.
func TestOf_observations(t *testing.T) {
	root := filetree.New(t, map[string]string{"cuda/include/cuda.h": cudaH124, "cuda/lib64/libcudart.so.12": "ELF"})
	a := Artifact{Path: filepath.Join(root, "cuda/lib64/libcudart.so.12"), Kind: abi.KindDynamicLib, Library: cudart, Platform: linux}
	record := func() (Answer, []observe.Observation) {
		rec := &observe.Recorder{}
		ans := Of(a, rec)
		return ans, rec.List()
	}
	ans, seen := record()
	if ans.CUDA != "12.4" || ans.From != Toolkit || ans.Version != "" {
		t.Fatalf("from cuda.h: %+v", ans)
	}
	if why := observe.Check(seen, os.Getenv, sandboxfs.See); why != "" {
		t.Fatalf("a fresh record does not hold: %s", why)
	}
	versionJSON := filepath.Join(root, "cuda", "version.json")
	os.WriteFile(versionJSON, []byte(versionJSON124), 0o644)
	if why := observe.Check(seen, os.Getenv, sandboxfs.See); !strings.Contains(why, versionJSON) {
		t.Fatalf("a new version.json left the record holding (%q)", why)
	}
	if ans, seen = record(); ans.Version != "12.4.127" {
		t.Fatalf("from version.json: %+v", ans)
	}
	os.WriteFile(versionJSON, []byte(strings.ReplaceAll(versionJSON124, "12.4.1", "12.4.99")), 0o644)
	if why := observe.Check(seen, os.Getenv, sandboxfs.See); !strings.Contains(why, versionJSON) {
		t.Fatalf("a changed version.json left the record holding (%q)", why)
	}

	// A file no source dates: every place asked is recorded, and a later wheel or conda package
	// there is seen.
	root = filetree.New(t, map[string]string{"sp/nvidia/cuda_runtime/lib/libcudart.so.12": "ELF"})
	a.Path = filepath.Join(root, "sp/nvidia/cuda_runtime/lib/libcudart.so.12")
	a.Library = &abi.Descriptor{Name: "cudart", LinuxSonames: cudart.LinuxSonames, SitePackagesLinux: cudart.SitePackagesLinux, CondaRelDirsLinux: []string{"nvidia/cuda_runtime/lib"}}
	if ans, seen = record(); ans.CUDA != "" {
		t.Fatalf("dated from nothing: %+v", ans)
	}
	for _, p := range []string{"sp/nvidia_cuda_runtime_cu12-12.4.127.dist-info/RECORD", "sp/conda-meta/x.json"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), nil, 0o644)
		if why := observe.Check(seen, os.Getenv, sandboxfs.See); why == "" {
			t.Errorf("%s appeared and the record still holds", p)
		}
		ans, seen = record()
	}
}

func Test_under(t *testing.T) {
	for _, tt := range []struct{ dir, layout, want string }{
		{"/opt/cuda/lib64", "lib64", "/opt/cuda"},
		{"/opt/cuda/targets/x86_64-linux/lib", "lib", "/opt/cuda/targets/x86_64-linux"},
		{"/opt/cuda/targets/x86_64-linux", "targets/*", "/opt/cuda"},
		{"/sp/nvidia/cu13/lib", "nvidia/cu13/lib", "/sp"},
		{"/lib", "lib", ""},
		{"/usr/lib/x86_64-linux-gnu", "lib", ""},
		{"lib", "lib", ""},
	} {
		got, ok := under(tt.dir, tt.layout)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("under(%q, %q) = %q, %v; want %q", tt.dir, tt.layout, got, ok, tt.want)
		}
	}
}
