package integration

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
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
	canary        string // a toolkit root with cudart in a plain lib64, nvvm, cupti, nvcc and ptxas beside it
	canary118     string // the CUDA 11.8 one: libcudart.so.11.0 and its 11.8 nvvm
	debian        string // one library directory the way Debian installs them, for LD_LIBRARY_PATH
	driver550     string // the 550 driver's libcuda and libnvidia-ml, as NVIDIA's installer puts them
	driver535     string
	ncclHome      string // an NCCL_HOME
	preloadCudart string // a copy of libcudart.so.12 of its own, for LD_PRELOAD
	stubs         string // the toolkit's lib64/stubs, holding the link-time libcuda stub
	pkgs          map[string]realnv.Package
	versions      map[string]string // by soname: the file name its package gives the library
}

// versioned is the file name l's package gives its library, the one its soname link leads to.
func (tr *trees) versioned(l cudaLib) string { return tr.versions[l.soname] }

func buildTrees(t *testing.T, dir string) *trees {
	tr := &trees{pkgs: map[string]realnv.Package{}, versions: map[string]string{}}
	for _, p := range []string{
		"trixie/libcudart12", "trixie/libcublas12", "trixie/libcublaslt12", "trixie/libnvrtc12",
		"trixie/libnvrtc-builtins12.4", "trixie/libnvjitlink12", "trixie/libnvvm4", "trixie/libcupti12",
		"trixie/libcurand10", "trixie/libnvjpeg12", "trixie/libnccl2", "trixie/libcuda1", "trixie/libnvidia-ml1",
		"bookworm/libcudart11.0", "bookworm/libnvvm4", "bookworm/libcuda1", "bookworm/libnvidia-ml1",
		"trixie/nvidia-cuda-toolkit",
	} {
		tr.pkgs[p] = realnv.Get(t, p)
	}
	for _, l := range cuda124 {
		tr.versions[l.soname] = tr.pkgs[l.pkg].Versioned(t, l.soname)
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
	// Debian's own nvcc and ptxas, where NVIDIA's toolkit has them: the package's /usr/lib/cuda/bin
	// is empty, its tools are in /usr/bin (ptxas) and /usr/lib/nvidia-cuda-toolkit/bin (nvcc).
	ctk := tr.pkgs["trixie/nvidia-cuda-toolkit"]
	realnv.Place(t, ctk.Path("usr/lib/nvidia-cuda-toolkit/bin/nvcc"), filepath.Join(tr.canary, "bin", "nvcc"))
	realnv.Place(t, ctk.Path("usr/bin/ptxas"), filepath.Join(tr.canary, "bin", "ptxas"))
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
		filetree.Symlink(t, file, filepath.Join(dir, soname))
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
		filetree.Symlink(t, "targets/x86_64-linux/lib", filepath.Join(root, "lib64"))
	}
	return root
}

// stubLibcuda makes the toolkit's link-time libcuda stub in dir: soname libcuda.so.1, and
// cuDriverGetVersion answers CUDA_ERROR_STUB_LIBRARY (34) as NVIDIA's does. Debian ships no stub, so
// gcc makes it. libcuda.so.1 -> libcuda.so is the link container builds add so that programs link.
func stubLibcuda(t *testing.T, dir string) {
	elfso.Build(t, filepath.Join(dir, "libcuda.so"), "libcuda.so.1",
		"int cuDriverGetVersion(int *v) { (void)v; return 34; }\nint cuInit(unsigned f) { (void)f; return 34; }\n")
	filetree.Symlink(t, "libcuda.so", filepath.Join(dir, "libcuda.so.1"))
}

// forests are installs made of symbolic links that lead out of the directory a user names, as real
// ones are (issue 17): every path below is where a user points pathfinder, every file lies elsewhere.
type forests struct {
	uvSite      string // a uv venv made with --link-mode=symlink: each file a link into uv's cache
	nixRoot     string // a Nix symlinkJoin of the CUDA packages: file links in lib/, nvvm/ a directory link
	spackView   string // a Spack view: lib64/*, nvvm/lib64/*, extras/CUPTI/lib64/* link into the prefix
	bazelSite   string // Bazel runfiles: site-packages/nvidia/cuda_runtime a directory link into external/
	debianCTK   string // Debian's nvidia-cuda-toolkit as dpkg lays it out: its /usr/lib/cuda
	sharedRoot  string // a CUDA_HOME whose lib64 anyone may write, holding a link to the real cudart
	stubRoot    string // a CUDA_HOME whose lib64/libcudart.so.12 links to stubs/libcudart.so
	uvCache     string
	nixStore    string
	spackPrefix string
	bazel       string
}

// uvCached is where uv's cache holds l's file: one cache entry a wheel.
func (fo *forests) uvCached(l cudaLib) string {
	return filepath.Join(fo.uvCache, "h-"+strings.SplitN(l.wheel, "/", 3)[1], l.wheel)
}

// uvVenv is the venv whose site-packages is uvSite.
func (fo *forests) uvVenv() string { return filepath.Dir(filepath.Dir(filepath.Dir(fo.uvSite))) }

// bazelExternal is where Bazel's external repository of the wheel holds l's file.
func (fo *forests) bazelExternal(l cudaLib) string {
	return filepath.Join(fo.bazel, "execroot", "external", "pypi_nvidia_cuda_runtime_cu12", "site-packages", l.wheel)
}

// buildForests lays the link forests out under dir, from the trees' files.
func buildForests(t *testing.T, tr *trees, dir string) *forests {
	fo := &forests{}
	// uv: the wheels' files live in the cache; the venv's site-packages holds an absolute link to each.
	fo.uvCache = filepath.Join(dir, "uv-cache", "archive-v0")
	fo.uvSite = filepath.Join(dir, "uv-venv", "lib", "python3.12", "site-packages")
	for _, l := range cuda124 {
		realnv.Place(t, tr.pkgs[l.pkg].Lib(l.soname), fo.uvCached(l))
		filetree.Symlink(t, fo.uvCached(l), filepath.Join(fo.uvSite, l.wheel))
	}

	// Nix: one store path a package, the toolkit root a symlinkJoin of them. Every input has lib/, so
	// lib/ is a directory of links; only nvcc has nvvm/, so nvvm is a link to nvcc's.
	fo.nixStore = filepath.Join(dir, "nix", "store")
	fo.nixRoot = filepath.Join(fo.nixStore, "0000-cuda-merged-12.4")
	store := map[string]string{}
	for _, l := range cuda124 {
		if l.toolkit == "" {
			continue
		}
		sp := filepath.Join(fo.nixStore, "h-"+filepath.Base(l.pkg))
		store[l.soname] = sp
		rel := "lib"
		if l.name == "nvvm" {
			rel = "nvvm/lib64"
		}
		tr.install(t, l.pkg, l.soname, filepath.Join(sp, rel))
		if l.name == "nvvm" {
			filetree.Symlink(t, filepath.Join(sp, "nvvm"), filepath.Join(fo.nixRoot, "nvvm"))
			continue
		}
		for _, f := range []string{tr.pkgs[l.pkg].Versioned(t, l.soname), l.soname} {
			filetree.Symlink(t, filepath.Join(sp, "lib", f), filepath.Join(fo.nixRoot, "lib", f))
		}
	}

	// Spack: the toolkit installed in its prefix, the view a tree of directories with a link a file.
	fo.spackPrefix = tr.toolkitRoot(t, filepath.Join(dir, "spack", "opt", "linux-x86_64", "cuda-12.4.1-abcdef"), false)
	fo.spackView = filepath.Join(dir, "spack", "view")
	filepath.WalkDir(fo.spackPrefix, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(fo.spackPrefix, p)
			filetree.Symlink(t, p, filepath.Join(fo.spackView, rel))
		}
		return err
	})

	// Bazel: the wheel's files under external/, the runfiles' site-packages a link to its directory.
	fo.bazel = filepath.Join(dir, "bazel")
	cudart := byName("cudart")
	realnv.Place(t, tr.pkgs[cudart.pkg].Lib(cudart.soname), fo.bazelExternal(cudart))
	fo.bazelSite = filepath.Join(fo.bazel, "app.runfiles", "_main", "site-packages")
	filetree.Symlink(t, filepath.Dir(filepath.Dir(fo.bazelExternal(cudart))), filepath.Join(fo.bazelSite, "nvidia", "cuda_runtime"))

	// Debian's toolkit package, unpacked as dpkg would: /usr/lib/cuda/nvvm/libdevice is the relative
	// link ../../nvidia-cuda-toolkit/libdevice.
	fo.debianCTK = tr.pkgs["trixie/nvidia-cuda-toolkit"].Path("usr/lib/cuda")

	// A lib64 anyone may write, holding a link to the toolkit's cudart.
	fo.sharedRoot = filepath.Join(dir, "shared-cuda")
	filetree.Symlink(t, filepath.Join(tr.toolkit, cudart.toolkit), filepath.Join(fo.sharedRoot, cudart.toolkit))
	if err := os.Chmod(filepath.Join(fo.sharedRoot, "lib64"), 0o777); err != nil {
		t.Fatal(err)
	}

	// A soname link to the toolkit's link-time stub: a stub all the same.
	fo.stubRoot = filepath.Join(dir, "stub-cuda")
	elfso.Build(t, filepath.Join(fo.stubRoot, "lib64", "stubs", "libcudart.so"), "libcudart.so.12",
		"int cudaRuntimeGetVersion(int *v) { (void)v; return 34; }\n")
	filetree.Symlink(t, "stubs/libcudart.so", filepath.Join(fo.stubRoot, "lib64", "libcudart.so.12"))
	return fo
}
