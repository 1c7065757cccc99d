package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/realnv"
)

// cudaLib is one of CUDA 12.4's libraries from Debian and where each kind of install puts it. The
// places are written out from what NVIDIA's wheels, conda-forge's packages and the toolkit really
// ship, not read from pathfinder's catalog: the suite holds the catalog against them.
type cudaLib struct {
	name    string // the catalog name; "" for a file that only rides along (nvrtc's builtins)
	pkg     string // the realnv package holding it
	soname  string
	wheel   string // under site-packages, in the CUDA 12 wheel (nvidia-*-cu12)
	toolkit string // under a CUDA toolkit root; "" where the toolkit has none (nccl)
	conda   string // under $CONDA_PREFIX
}

var cuda124 = []cudaLib{
	{"cudart", "trixie/libcudart12", "libcudart.so.12", "nvidia/cuda_runtime/lib/libcudart.so.12", "lib64/libcudart.so.12", "lib/libcudart.so.12"},
	{"cublasLt", "trixie/libcublaslt12", "libcublasLt.so.12", "nvidia/cublas/lib/libcublasLt.so.12", "lib64/libcublasLt.so.12", "lib/libcublasLt.so.12"},
	{"cublas", "trixie/libcublas12", "libcublas.so.12", "nvidia/cublas/lib/libcublas.so.12", "lib64/libcublas.so.12", "lib/libcublas.so.12"},
	{"nvrtc", "trixie/libnvrtc12", "libnvrtc.so.12", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "lib64/libnvrtc.so.12", "lib/libnvrtc.so.12"},
	{"", "trixie/libnvrtc-builtins12.4", "libnvrtc-builtins.so.12.4", "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.4", "lib64/libnvrtc-builtins.so.12.4", "lib/libnvrtc-builtins.so.12.4"},
	{"nvJitLink", "trixie/libnvjitlink12", "libnvJitLink.so.12", "nvidia/nvjitlink/lib/libnvJitLink.so.12", "lib64/libnvJitLink.so.12", "lib/libnvJitLink.so.12"},
	// The nvcc wheel ships nvvm as plain libnvvm.so (why cuda.pathfinder declares that name too).
	{"nvvm", "trixie/libnvvm4", "libnvvm.so.4", "nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so", "nvvm/lib64/libnvvm.so.4", "nvvm/lib64/libnvvm.so.4"},
	{"cupti", "trixie/libcupti12", "libcupti.so.12", "nvidia/cuda_cupti/lib/libcupti.so.12", "extras/CUPTI/lib64/libcupti.so.12", "lib/libcupti.so.12"},
	{"curand", "trixie/libcurand10", "libcurand.so.10", "nvidia/curand/lib/libcurand.so.10", "lib64/libcurand.so.10", "lib/libcurand.so.10"},
	{"nvjpeg", "trixie/libnvjpeg12", "libnvjpeg.so.12", "nvidia/nvjpeg/lib/libnvjpeg.so.12", "lib64/libnvjpeg.so.12", "lib/libnvjpeg.so.12"},
	{"nccl", "trixie/libnccl2", "libnccl.so.2", "nvidia/nccl/lib/libnccl.so.2", "", "lib/libnccl.so.2"},
}

func byName(name string) cudaLib {
	for _, l := range cuda124 {
		if l.name == name {
			return l
		}
	}
	panic("no " + name + " in cuda124")
}

// trees are the installs the layouts are made of, built once from the unpacked packages with hard
// links (the loader sees one library however many trees hold it; the preloaded copy is a real copy).
type trees struct {
	venv, site    string // a virtual environment with the CUDA 12 wheels
	conda         string // a conda env
	toolkit       string // a CUDA 12.4 toolkit: lib64 -> targets/x86_64-linux/lib, and a stub libcuda
	toolkit2      string // a second one, for CUDA_PATH over CUDA_HOME
	canary        string // a toolkit root with cudart in a plain lib64, nvvm and cupti beside it
	canary118     string // the CUDA 11.8 one: libcudart.so.11.0 and its 11.8 nvvm
	debian        string // one library directory the way Debian installs them, for LD_LIBRARY_PATH
	driver550     string // the 550 driver's libcuda and libnvidia-ml, as NVIDIA's installer puts them
	driver535     string
	ncclHome      string // an NCCL_HOME
	preloadCudart string // a copy of libcudart.so.12 of its own, for LD_PRELOAD
	stubs         string // the toolkit's lib64/stubs, holding the link-time libcuda stub
	pkgs          map[string]realnv.Package
}

func buildTrees(t *testing.T, dir string) *trees {
	tr := &trees{pkgs: map[string]realnv.Package{}}
	for _, p := range []string{
		"trixie/libcudart12", "trixie/libcublas12", "trixie/libcublaslt12", "trixie/libnvrtc12",
		"trixie/libnvrtc-builtins12.4", "trixie/libnvjitlink12", "trixie/libnvvm4", "trixie/libcupti12",
		"trixie/libcurand10", "trixie/libnvjpeg12", "trixie/libnccl2", "trixie/libcuda1", "trixie/libnvidia-ml1",
		"bookworm/libcudart11.0", "bookworm/libnvvm4", "bookworm/libcuda1", "bookworm/libnvidia-ml1",
	} {
		tr.pkgs[p] = realnv.Get(t, p)
	}

	tr.venv = filepath.Join(dir, "venv")
	tr.site = filepath.Join(tr.venv, "lib", "python3.12", "site-packages")
	for _, l := range cuda124 {
		realnv.Place(t, tr.pkgs[l.pkg].Lib(l.soname), filepath.Join(tr.site, l.wheel)) // wheels hold plain files
	}
	tr.conda = filepath.Join(dir, "conda")
	for _, l := range cuda124 {
		tr.install(t, l.pkg, l.soname, filepath.Join(tr.conda, filepath.Dir(l.conda)))
	}
	tr.toolkit = tr.toolkitRoot(t, filepath.Join(dir, "cuda-12.4"), true)
	tr.toolkit2 = tr.toolkitRoot(t, filepath.Join(dir, "cuda-12.4-other"), true)
	tr.stubs = filepath.Join(tr.toolkit, "lib64", "stubs")
	stubLibcuda(t, filepath.Join(tr.toolkit, "targets", "x86_64-linux", "lib", "stubs"))

	tr.canary = filepath.Join(dir, "canary-12.4")
	for _, l := range cuda124 {
		if l.name == "cudart" || l.name == "nvvm" || l.name == "cupti" {
			tr.install(t, l.pkg, l.soname, filepath.Join(tr.canary, filepath.Dir(l.toolkit)))
		}
	}
	tr.canary118 = filepath.Join(dir, "canary-11.8")
	tr.install(t, "bookworm/libcudart11.0", "libcudart.so.11.0", filepath.Join(tr.canary118, "lib64"))
	tr.install(t, "bookworm/libnvvm4", "libnvvm.so.4", filepath.Join(tr.canary118, "nvvm", "lib64"))

	tr.debian = filepath.Join(dir, "debian", "usr", "lib", "x86_64-linux-gnu")
	for _, l := range cuda124 {
		tr.install(t, l.pkg, l.soname, tr.debian)
	}
	tr.driver550 = filepath.Join(dir, "driver-550", "usr", "lib", "x86_64-linux-gnu")
	tr.driver535 = filepath.Join(dir, "driver-535", "usr", "lib", "x86_64-linux-gnu")
	for suite, d := range map[string]string{"trixie": tr.driver550, "bookworm": tr.driver535} {
		tr.install(t, suite+"/libcuda1", "libcuda.so.1", d)
		tr.install(t, suite+"/libnvidia-ml1", "libnvidia-ml.so.1", d)
	}
	tr.ncclHome = filepath.Join(dir, "nccl-2.22")
	tr.install(t, "trixie/libnccl2", "libnccl.so.2", filepath.Join(tr.ncclHome, "lib"))

	tr.preloadCudart = filepath.Join(dir, "preload", "libcudart.so.12")
	realnv.Copy(t, tr.pkgs["trixie/libcudart12"].Lib("libcudart.so.12"), tr.preloadCudart)
	return tr
}

// install puts a library into dir the way packages do: the versioned file and the soname link to it.
func (tr *trees) install(t *testing.T, pkg, soname, dir string) {
	p := tr.pkgs[pkg]
	file := p.Versioned(t, soname)
	realnv.Place(t, p.Lib(soname), filepath.Join(dir, file))
	if file != soname {
		realnv.Symlink(t, file, filepath.Join(dir, soname))
	}
}

// toolkitRoot builds a CUDA 12.4 toolkit at root with every library it ships. With targets, lib64 is
// the link to targets/x86_64-linux/lib that NVIDIA's toolkit installs; else a plain directory.
func (tr *trees) toolkitRoot(t *testing.T, root string, targets bool) string {
	for _, l := range cuda124 {
		if l.toolkit == "" {
			continue
		}
		dir := filepath.Join(root, filepath.Dir(l.toolkit))
		if targets && strings.HasPrefix(l.toolkit, "lib64/") {
			dir = filepath.Join(root, "targets", "x86_64-linux", "lib")
		}
		tr.install(t, l.pkg, l.soname, dir)
	}
	if targets {
		realnv.Symlink(t, "targets/x86_64-linux/lib", filepath.Join(root, "lib64"))
	}
	return root
}

// stubLibcuda makes the toolkit's link-time libcuda stub in dir: soname libcuda.so.1, and
// cuDriverGetVersion answers CUDA_ERROR_STUB_LIBRARY (34) as NVIDIA's does. Debian ships no stub, so
// gcc makes it. libcuda.so.1 -> libcuda.so is the link container builds add so that programs link.
func stubLibcuda(t *testing.T, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "stub.c")
	code := "int cuDriverGetVersion(int *v) { (void)v; return 34; }\nint cuInit(unsigned f) { (void)f; return 34; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("gcc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", filepath.Join(dir, "libcuda.so"), src).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	realnv.Symlink(t, "libcuda.so", filepath.Join(dir, "libcuda.so.1"))
}
