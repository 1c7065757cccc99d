package cudaversion_test

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/cudaversion"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

var linux = abi.Platform{OS: "linux", Arch: "amd64"}

// builtinLib is the builtin pack's descriptor of the dynamic library name: these tests hold its
// dating facts, not a copy of them, to NVIDIA's files.
func builtinLib(t *testing.T, name string) *abi.Descriptor {
	c, err := catalog.Cached("", catalog.Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()})
	if err != nil {
		t.Fatal(err)
	}
	e, ok := c.Lookup(abi.KindDynamicLib, name)
	if !ok {
		t.Fatalf("no %s in the builtin pack", name)
	}
	return &e.Descriptor
}

// TestOf_NVIDIAsBinaries dates NVIDIA's CUDA 12.4.1 libraries as Debian ships them, and laid out
// as a wheel and as a toolkit install them.
func TestOf_NVIDIAsBinaries(t *testing.T) {
	type want struct {
		cuda, version string
		from          cudaversion.Source
		looked        string // for no CUDA: what Looked holds
	}
	realnv.Get(t, "trixie/libcudart12") // skips, once, where the libraries were not fetched
	debian := func(t *testing.T, pkg, lib, soname string) (string, string, *abi.Descriptor) {
		p := realnv.Get(t, "trixie/"+pkg).Lib(soname)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return p, real, builtinLib(t, lib)
	}
	check := func(t *testing.T, a cudaversion.Artifact, w want) {
		t.Helper()
		got := cudaversion.Of(a, &observe.Recorder{})
		if got.CUDA != w.cuda || got.Version != w.version || got.From != w.from || !strings.Contains(strings.Join(got.Looked, "\n"), w.looked) {
			t.Errorf("Of(%s):\n got %+v\nwant %+v", a.Path, got, w)
		}
	}
	for _, tt := range []struct {
		pkg, lib, soname string
		want             want
	}{
		{"libcudart12", "cudart", "libcudart.so.12", want{"12.4", "12.4.127", cudaversion.FileName, ""}},
		{"libnvrtc12", "nvrtc", "libnvrtc.so.12", want{"12.4", "12.4.127", cudaversion.FileName, ""}},
		{"libnvjitlink12", "nvJitLink", "libnvJitLink.so.12", want{"12.4", "12.4.127", cudaversion.FileName, ""}},
		{"libcublas12", "cublas", "libcublas.so.12", want{"12", "12.4.5.8", cudaversion.FileName, ""}},
		{"libcublaslt12", "cublasLt", "libcublasLt.so.12", want{"12", "12.4.5.8", cudaversion.FileName, ""}},
		{"libnvjpeg12", "nvjpeg", "libnvjpeg.so.12", want{"12", "12.3.1.117", cudaversion.FileName, ""}},
		{"libcupti12", "cupti", "libcupti.so.12", want{"12", "2024.1.1", cudaversion.FileName, ""}},
		{"libcurand10", "curand", "libcurand.so.10", want{looked: "file-name: libcurand.so.10.3.5.147 is version 10.3.5.147, but no CUDA major is declared for libcurand.so.10"}},
		{"libnvvm4", "nvvm", "libnvvm.so.4", want{looked: "file-name: libnvvm.so.4.0.0 is version 4.0.0, but no CUDA major is declared for libnvvm.so.4"}},
	} {
		t.Run("Debian's "+tt.soname, func(t *testing.T) {
			p, real, lib := debian(t, tt.pkg, tt.lib, tt.soname)
			check(t, cudaversion.Artifact{Path: p, Real: real, Kind: abi.KindDynamicLib, Library: lib, Platform: linux}, tt.want)
		})
	}

	t.Run("a wheel", func(t *testing.T) {
		_, real, lib := debian(t, "libcudart12", "cudart", "libcudart.so.12")
		site := filepath.Join(t.TempDir(), "venv", "lib", "python3.12", "site-packages")
		p := filepath.Join(site, "nvidia", "cuda_runtime", "lib", "libcudart.so.12")
		realnv.Place(t, real, p)
		writeWheel(t, site, "nvidia-cuda-runtime-cu12", "12.4.127", "nvidia/cuda_runtime/lib/libcudart.so.12")
		check(t, cudaversion.Artifact{Path: p, Real: p, Kind: abi.KindDynamicLib, Library: lib, Platform: linux}, want{"12.4", "12.4.127", cudaversion.Wheel, ""})
	})

	t.Run("a toolkit", func(t *testing.T) {
		_, real, lib := debian(t, "libcudart12", "cudart", "libcudart.so.12")
		root := filepath.Join(t.TempDir(), "cuda-12.4")
		file := filepath.Join(root, "targets", "x86_64-linux", "lib", filepath.Base(real))
		realnv.Place(t, real, file)
		filetree.Symlink(t, filepath.Base(real), filepath.Join(filepath.Dir(file), "libcudart.so.12"))
		filetree.Symlink(t, "targets/x86_64-linux/lib", filepath.Join(root, "lib64"))
		versionJSON := `{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}}`
		if err := os.WriteFile(filepath.Join(root, "version.json"), []byte(versionJSON), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, cudaversion.Artifact{Path: filepath.Join(root, "lib64", "libcudart.so.12"), Real: file, Kind: abi.KindDynamicLib, Library: lib, Platform: linux},
			want{"12.4", "12.4.127", cudaversion.Toolkit, ""})
	})
}

// writeWheel writes the dist-info pip leaves for a wheel that installed the files under site: its
// METADATA, and a RECORD with each file's sha256 and size as PEP 376 has them.
func writeWheel(t *testing.T, site, name, version string, files ...string) {
	info := filepath.Join(site, strings.ReplaceAll(name, "-", "_")+"-"+version+".dist-info")
	var record strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(site, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f, base64.RawURLEncoding.EncodeToString(sum[:]), len(data))
	}
	fmt.Fprintf(&record, "%s/METADATA,,\n%[1]s/RECORD,,\n", filepath.Base(info))
	metadata := fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: CUDA Runtime native Libraries\n\nCUDA Runtime native Libraries\n", name, version)
	if err := os.MkdirAll(info, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string]string{"METADATA": metadata, "RECORD": record.String()} {
		if err := os.WriteFile(filepath.Join(info, file), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
