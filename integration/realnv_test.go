package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// notLoadable is the --json error kind of a library that was found but that the loader refused
// (Debian's nccl 2.22 needs GLIBC_2.38; this machine's glibc is 2.36).
// ISSUE 11 POINT 6: the kind of its own is being added; put its exact string here ("" asserts none).
const notLoadable = "load-failed"

const alreadyLoaded = "was-already-loaded-from-elsewhere"

// want is the answer a case expects: found at path through foundVia, or a failure whose message
// holds every string of fails (and whose --json error kind is kind, where given).
type want struct {
	path, foundVia string
	real           string // the real_path, where links lead elsewhere ("" for none)
	fails          []string
	kind           string
}

func at(path, foundVia string) want { return want{path: path, foundVia: foundVia} }

// linked is at for a path whose links lead to the file real.
func linked(path, real, foundVia string) want {
	return want{path: path, foundVia: foundVia, real: real}
}

func failsWith(kind string, says ...string) want { return want{fails: says, kind: kind} }

// check is one case: one command in a fresh process.
type check struct {
	name string
	run  func(t *testing.T, s *suite, env map[string]string)
}

// layout is an install and the environment that points at it, with the cases run in it.
type layout struct {
	name   string
	env    map[string]string
	checks []check
}

// both is findAndLoad expecting one answer from both.
func both(lib string, w want) []check { return findAndLoad(lib, w, w) }

// findAndLoad is the two cases of one library: `pathfinder find` and `pathfinder load`, each asked
// for --json in a process of its own.
func findAndLoad(lib string, find, load want) []check {
	return []check{
		{"find " + lib, func(t *testing.T, s *suite, env map[string]string) { s.checkLib(t, env, "find", lib, find) }},
		{"load " + lib, func(t *testing.T, s *suite, env map[string]string) { s.checkLib(t, env, "load", lib, load) }},
	}
}

func layouts(tr *trees) []layout {
	var out []layout
	each := func(where func(cudaLib) string, foundVia string) []check {
		var cs []check
		for _, l := range cuda124 {
			p := where(l)
			if l.name == "" || p == "" {
				continue
			}
			load := at(p, foundVia)
			if l.name == "nccl" { // Debian's nccl 2.22 needs GLIBC_2.38: find finds it, the loader refuses it
				load = failsWith(notLoadable, p, "GLIBC_2.38")
			}
			cs = append(cs, findAndLoad(l.name, at(p, foundVia), load)...)
		}
		return cs
	}
	wheel := func(l cudaLib) string { return filepath.Join(tr.site, l.wheel) }
	conda := func(l cudaLib) string { return filepath.Join(tr.conda, l.conda) }
	toolkit := func(root string) func(cudaLib) string {
		return func(l cudaLib) string {
			if l.toolkit == "" {
				return ""
			}
			return filepath.Join(root, l.toolkit)
		}
	}
	debian := func(l cudaLib) string { return filepath.Join(tr.debian, l.soname) }

	out = append(out,
		layout{"wheels (VIRTUAL_ENV)", map[string]string{"VIRTUAL_ENV": tr.venv}, append(each(wheel, "site-packages"),
			mapsCheck("cudart", "libcudart.so", at(wheel(byName("cudart")), "site-packages"), wheel(byName("cudart"))))},
		layout{"wheels (PATHFINDER_SITE_PACKAGES)", map[string]string{"PATHFINDER_SITE_PACKAGES": tr.site}, each(wheel, "site-packages")},
		layout{"conda", map[string]string{"CONDA_PREFIX": tr.conda}, each(conda, "conda")},
		// conda comes before the toolkit roots: its nvvm, not the toolkit's (issue 11, point 2).
		layout{"conda and CUDA_HOME", map[string]string{"CONDA_PREFIX": tr.conda, "CUDA_HOME": tr.toolkit}, append(
			both("nvvm", at(conda(byName("nvvm")), "conda")),
			both("cudart", at(conda(byName("cudart")), "conda"))...)},
		// pathfinder keeps the label CUDA_HOME for a CUDA_HOME hit (cuda.pathfinder says CUDA_PATH).
		layout{"CUDA_HOME (lib64 -> targets/x86_64-linux/lib)", map[string]string{"CUDA_HOME": tr.toolkit}, each(toolkit(tr.toolkit), "CUDA_HOME")},
		layout{"CUDA_PATH over CUDA_HOME", map[string]string{"CUDA_PATH": tr.toolkit, "CUDA_HOME": tr.toolkit2}, each(toolkit(tr.toolkit), "CUDA_PATH")},
		layout{"system loader (LD_LIBRARY_PATH, Debian's layout)", map[string]string{"LD_LIBRARY_PATH": tr.debian}, each(debian, "system-search")},
		layout{"NCCL_HOME", map[string]string{"NCCL_HOME": tr.ncclHome}, findAndLoad("nccl",
			at(filepath.Join(tr.ncclHome, "lib", "libnccl.so.2"), "NCCL_HOME"),
			failsWith(notLoadable, filepath.Join(tr.ncclHome, "lib", "libnccl.so.2"), "GLIBC_2.38"))},
	)

	// The canary: nvvm, cupti and the tools are not on the loader's path, but the toolkit root of the
	// cudart it finds holds them.
	canary := func(rel string) string { return filepath.Join(tr.canary, rel) }
	out = append(out, layout{"canary (CUDA 12.4 toolkit's lib64 on LD_LIBRARY_PATH)", map[string]string{"LD_LIBRARY_PATH": canary("lib64")}, concat(
		both("cudart", at(canary("lib64/libcudart.so.12"), "system-search")),
		both("nvvm", at(canary("nvvm/lib64/libnvvm.so.4"), "system-ctk-root")),
		both("cupti", at(canary("extras/CUPTI/lib64/libcupti.so.12"), "system-ctk-root")),
		findBinary("nvcc", at(canary("bin/nvcc"), "system-ctk-root")), findBinary("ptxas", at(canary("bin/ptxas"), "system-ctk-root")),
		reference("", "nvcc", at(canary("bin/nvcc"), "system-ctk-root")),
	)})
	// CUDA 11.8's cudart is libcudart.so.11.0, which no descriptor declares (cuda.pathfinder 1.8 matches
	// declared sonames only): it is no canary, so its nvvm is not found through it...
	nvvm118 := filepath.Join(tr.canary118, "nvvm", "lib64", "libnvvm.so.4")
	out = append(out, layout{"canary (CUDA 11.8 toolkit's lib64 on LD_LIBRARY_PATH)", map[string]string{"LD_LIBRARY_PATH": filepath.Join(tr.canary118, "lib64")}, concat(
		both("cudart", failsWith("not-found", "libcudart.so.12")),
		both("nvvm", failsWith("not-found", "libnvvm.so.4")),
	)})
	// ...and with a 12.4 toolkit after it on the path, nvvm comes from the 12.4 root, never the 11.8 one.
	out = append(out, layout{"canary (CUDA 11.8 then 12.4 on LD_LIBRARY_PATH)", map[string]string{"LD_LIBRARY_PATH": filepath.Join(tr.canary118, "lib64") + ":" + canary("lib64")}, concat(
		both("cudart", at(canary("lib64/libcudart.so.12"), "system-search")),
		both("nvvm", at(canary("nvvm/lib64/libnvvm.so.4"), "system-ctk-root")),
	)})
	// The 11.8 nvvm itself loads when a root names it.
	out = append(out, layout{"CUDA_HOME on the CUDA 11.8 toolkit", map[string]string{"CUDA_HOME": tr.canary118},
		both("nvvm", at(nvvm118, "CUDA_HOME"))})

	// Driver libraries come only from the loader.
	for _, d := range []struct {
		name, dir, file, version string
	}{
		{"driver 550", tr.driver550, "libcuda.so.550.163.01", "12040 (CUDA 12.4)"},
		{"driver 535", tr.driver535, "libcuda.so.535.261.03", "12020 (CUDA 12.2)"},
	} {
		cuda, nvml := filepath.Join(d.dir, "libcuda.so.1"), filepath.Join(d.dir, "libnvidia-ml.so.1")
		out = append(out, layout{d.name + " (LD_LIBRARY_PATH)", map[string]string{"LD_LIBRARY_PATH": d.dir, "VIRTUAL_ENV": tr.venv}, concat(
			both("cuda", at(cuda, "system-search")),
			both("nvml", at(nvml, "system-search")),
			[]check{mapsCheck("cuda", "libcuda.so", at(cuda, "system-search"), filepath.Join(d.dir, d.file)),
				exampleCheck(cuda, d.version, filepath.Join(tr.site, byName("nvrtc").wheel))},
		)})
	}
	// A toolkit's stubs directory on LD_LIBRARY_PATH (container builds do this to link) before the real
	// driver: the stub is never the answer and never stays loaded (issue 11, point 3).
	real550 := filepath.Join(tr.driver550, "libcuda.so.1")
	out = append(out, layout{"stub libcuda before driver 550 on LD_LIBRARY_PATH", map[string]string{"LD_LIBRARY_PATH": tr.stubs + ":" + tr.driver550, "VIRTUAL_ENV": tr.venv}, concat(
		both("cuda", at(real550, "system-search")),
		[]check{mapsCheck("cuda", "libcuda.so", at(real550, "system-search"), filepath.Join(tr.driver550, "libcuda.so.550.163.01")),
			exampleCheck(real550, "12040 (CUDA 12.4)", filepath.Join(tr.site, byName("nvrtc").wheel))},
	)})
	// A copy of libcudart already in the process (LD_PRELOAD) while a wheel holds another: load gives the
	// copy in the process and maps no second one (issue 11, point 1). find loads nothing: the wheel.
	wheelCudart := filepath.Join(tr.site, byName("cudart").wheel)
	out = append(out, layout{"preloaded libcudart and a wheel's", map[string]string{"VIRTUAL_ENV": tr.venv, "LD_PRELOAD": tr.preloadCudart}, concat(
		findAndLoad("cudart", at(wheelCudart, "site-packages"), at(tr.preloadCudart, alreadyLoaded)),
		[]check{mapsCheck("cudart", "libcudart.so", at(tr.preloadCudart, alreadyLoaded), tr.preloadCudart)},
	)})
	return out
}

// forestLayouts are the installs made of links (issue 17): each answers as cuda.pathfinder does, with
// the path inside the directory named and, in real_path, the file the links lead to.
func forestLayouts(tr *trees, fo *forests) []layout {
	var out []layout
	uv := func(name string) want {
		l := byName(name)
		return linked(filepath.Join(fo.uvSite, l.wheel), fo.uvCached(l), "site-packages")
	}
	out = append(out, layout{"uv venv, --link-mode=symlink (VIRTUAL_ENV)", map[string]string{"VIRTUAL_ENV": fo.uvVenv()}, concat(
		both("cudart", uv("cudart")), both("cublas", uv("cublas")), both("nvrtc", uv("nvrtc")), both("nvvm", uv("nvvm")),
		[]check{dependencyCheck("cublas", uv("cublasLt")), explainCheck("cudart", fo.uvSite+"/"+byName("cudart").wheel+" → "+fo.uvCached(byName("cudart")))},
		reference(fo.uvSite, "cudart", uv("cudart")), reference(fo.uvSite, "cublas", uv("cublas")),
		reference(fo.uvSite, "nvrtc", uv("nvrtc")), reference(fo.uvSite, "nvvm", uv("nvvm")),
	)})

	nix := func(name, rel string) want {
		l := byName(name)
		return linked(filepath.Join(fo.nixRoot, rel, l.soname), filepath.Join(fo.nixStore, "h-"+filepath.Base(l.pkg), rel, tr.versioned(l)), "CUDA_PATH")
	}
	out = append(out, layout{"Nix symlinkJoin (CUDA_PATH; nvvm/ a directory link)", map[string]string{"CUDA_PATH": fo.nixRoot}, concat(
		both("cudart", nix("cudart", "lib")), both("cublas", nix("cublas", "lib")),
		both("nvvm", nix("nvvm", "nvvm/lib64")), both("cupti", nix("cupti", "lib")),
		[]check{dependencyCheck("cublas", nix("cublasLt", "lib"))},
		reference("", "cudart", nix("cudart", "lib")), reference("", "cublas", nix("cublas", "lib")),
		reference("", "nvvm", nix("nvvm", "nvvm/lib64")), reference("", "cupti", nix("cupti", "lib")),
	)})

	spack := func(name string) want {
		l := byName(name)
		return linked(filepath.Join(fo.spackView, l.toolkit), filepath.Join(fo.spackPrefix, filepath.Dir(l.toolkit), tr.versioned(l)), "CUDA_HOME")
	}
	out = append(out, layout{"Spack view (CUDA_HOME)", map[string]string{"CUDA_HOME": fo.spackView}, concat(
		both("cudart", spack("cudart")), both("cublas", spack("cublas")), both("nvvm", spack("nvvm")), both("cupti", spack("cupti")),
		reference("", "cudart", spack("cudart")), reference("", "cublas", spack("cublas")),
		reference("", "nvvm", spack("nvvm")), reference("", "cupti", spack("cupti")),
	)})

	cudart := byName("cudart")
	bazel := linked(filepath.Join(fo.bazelSite, cudart.wheel), fo.bazelExternal(cudart), "site-packages")
	out = append(out, layout{"Bazel runfiles: a directory link into external/", map[string]string{"PATHFINDER_SITE_PACKAGES": fo.bazelSite},
		concat(both("cudart", bazel), reference(fo.bazelSite, "cudart", bazel))})

	libdevice := "nvvm/libdevice/libdevice.10.bc"
	out = append(out, layout{"Debian's nvidia-cuda-toolkit (CUDA_HOME=/usr/lib/cuda)", map[string]string{"CUDA_HOME": fo.debianCTK}, []check{
		{"find device --kind bitcode", func(t *testing.T, s *suite, env map[string]string) {
			s.checkLib(t, env, "find", "device", linked(filepath.Join(fo.debianCTK, libdevice),
				filepath.Join(filepath.Dir(fo.debianCTK), "nvidia-cuda-toolkit", "libdevice", "libdevice.10.bc"), "CUDA_HOME"), "--kind", "bitcode")
		}},
		reference("", "device", at(filepath.Join(fo.debianCTK, libdevice), "CUDA_HOME"))[0],
	}})

	realCudart := filepath.Join(tr.toolkit, "targets", "x86_64-linux", "lib", tr.versioned(cudart))
	shared := filepath.Join(fo.sharedRoot, cudart.toolkit)
	out = append(out, layout{"a link in a directory anyone may write (CUDA_HOME)", map[string]string{"CUDA_HOME": fo.sharedRoot}, concat(
		both("cudart", linked(shared, realCudart, "CUDA_HOME")),
		[]check{mapsCheck("cudart", "libcudart.so", linked(shared, realCudart, "CUDA_HOME"), realCudart),
			explainCheck("cudart", "a load goes through the checked file's descriptor, as directory "+filepath.Dir(shared)+" is writable by others")},
		reference("", "cudart", linked(shared, realCudart, "CUDA_HOME")),
	)})

	stub := filepath.Join(fo.stubRoot, cudart.toolkit)
	out = append(out, layout{"a soname link to a stub (CUDA_HOME)", map[string]string{"CUDA_HOME": fo.stubRoot},
		both("cudart", failsWith("refused", stub, filepath.Join(fo.stubRoot, "lib64", "stubs", "libcudart.so"), "stubs/ library")),
	})
	return out
}

// reference is NVIDIA's cuda.pathfinder asked the same, in a fresh python3 process with the layout's
// environment, when PATHFINDER_REFERENCE names a directory from which python3 imports cuda.pathfinder
// (its cuda_pathfinder/ source): load_nvidia_dynamic_lib, locate_bitcode_lib for libdevice, or
// find_nvidia_binary_utility for nvcc (a path, with no label). It
// must give the file w names, from the same directory, with w's label but for one known difference:
// it says CUDA_PATH for CUDA_HOME. In a toolkit's directory it may name the file by another of its
// names there (libcudart.so.12.4.127 for libcudart.so.12: it globs libcudart.so* and takes the last,
// where pathfinder takes a declared soname). site, when not "", is the site-packages python would
// list for the venv the layout stands for.
func reference(site, lib string, w want) []check {
	return []check{{"cuda.pathfinder " + lib, func(t *testing.T, s *suite, env map[string]string) {
		src := os.Getenv("PATHFINDER_REFERENCE")
		if src == "" {
			t.Skip("PATHFINDER_REFERENCE is not set: no cuda.pathfinder to compare with")
		}
		exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output() // past a pyenv shim
		if err != nil {
			t.Skip("no python3")
		}
		python := strings.TrimSpace(string(exe))
		const ask = `import json, site, sys
if sys.argv[1]: site.getsitepackages, site.ENABLE_USER_SITE = (lambda: [sys.argv[1]]), False
import cuda.pathfinder as p
if sys.argv[2] == "device":
    r = p.locate_bitcode_lib("device")
    print(json.dumps({"path": r.abs_path, "found_via": r.found_via}))
elif sys.argv[2] == "nvcc":
    print(json.dumps({"path": p.find_nvidia_binary_utility("nvcc")}))
else:
    r = p.load_nvidia_dynamic_lib(sys.argv[2])
    print(json.dumps({"path": r.abs_path, "found_via": r.found_via}))`
		env = maps.Clone(env)
		env["PYTHONPATH"] = src
		stdout, stderr, code := s.exec(t, env, python, "-c", ask, site, lib)
		var got answer
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 {
			t.Fatalf("cuda.pathfinder %s: exit %d, %v\nstdout: %s\nstderr: %s", lib, code, err, stdout, stderr)
		}
		via := w.foundVia
		if via == "CUDA_HOME" {
			via = "CUDA_PATH"
		}
		a, errA := os.Stat(got.Path)
		b, errB := os.Stat(w.path)
		if lib == "nvcc" {
			via = "" // find_nvidia_binary_utility gives a path, no label
		}
		if filepath.Dir(got.Path) != filepath.Dir(w.path) || errA != nil || errB != nil || !os.SameFile(a, b) || got.FoundVia != via {
			t.Errorf("cuda.pathfinder %s: %s via %q; pathfinder says %s via %q", lib, got.Path, got.FoundVia, w.path, w.foundVia)
		}
	}}}
}

// findBinary is the case of one binary utility: `pathfinder find --kind binary`, in a process of its own.
func findBinary(name string, w want) []check {
	return []check{{"find " + name + " --kind binary", func(t *testing.T, s *suite, env map[string]string) {
		s.checkLib(t, env, "find", name, w, "--kind", "binary")
	}}}
}

// dependencyCheck loads lib and expects its first dependency to be dep.
func dependencyCheck(lib string, dep want) check {
	return check{"load " + lib + ": its dependency first", func(t *testing.T, s *suite, env map[string]string) {
		stdout, stderr, code := s.exec(t, env, s.pathfinder, "load", "--json", lib)
		var got struct {
			Dependencies []answer `json:"dependencies"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 || len(got.Dependencies) == 0 {
			t.Fatalf("load --json %s: exit %d, %v\nstdout: %s\nstderr: %s", lib, code, err, stdout, stderr)
		}
		if d := got.Dependencies[0]; d.Path != dep.path || d.RealPath != dep.real || d.FoundVia != dep.foundVia {
			t.Errorf("load %s: first dependency %s (real %s) via %q, want %s (real %s) via %q", lib, d.Path, d.RealPath, d.FoundVia, dep.path, dep.real, dep.foundVia)
		}
	}}
}

// explainCheck runs explain lib and expects each line among its output.
func explainCheck(lib string, lines ...string) check {
	return check{"explain " + lib, func(t *testing.T, s *suite, env map[string]string) {
		stdout, stderr, code := s.exec(t, env, s.pathfinder, "explain", lib)
		for _, l := range lines {
			if code != 0 || !strings.Contains(stdout, l) {
				t.Errorf("explain %s: exit %d, no line with %q\nstdout: %s\nstderr: %s", lib, code, l, stdout, stderr)
			}
		}
	}}
}

func concat(cs ...[]check) []check {
	var out []check
	for _, c := range cs {
		out = append(out, c...)
	}
	return out
}

// mapsCheck loads lib through the Go API in a fresh process (integration/loadmaps) and expects w and,
// in /proc/self/maps, exactly one file whose name starts with prefix: the file mapped.
func mapsCheck(lib, prefix string, w want, mapped string) check {
	return check{"maps after loading " + lib, func(t *testing.T, s *suite, env map[string]string) {
		stdout, stderr, code := s.exec(t, env, s.loadmaps, lib, prefix)
		var r struct {
			answer
			Maps []string `json:"maps"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("loadmaps %s: exit %d, %v\nstdout: %s\nstderr: %s", lib, code, err, stdout, stderr)
		}
		if code != 0 || r.Path != w.path || r.FoundVia != w.foundVia || r.AlreadyLoaded != (w.foundVia == alreadyLoaded) {
			t.Errorf("loadmaps %s: exit %d, got %s via %q (already_loaded %v, error %q), want %s via %q", lib, code, r.Path, r.FoundVia, r.AlreadyLoaded, r.Error, w.path, w.foundVia)
		}
		if len(r.Maps) != 1 || !strings.HasSuffix(r.Maps[0], " "+mapped) {
			t.Errorf("/proc/self/maps after loading %s shows %d %s* files, want only %s:\n%s", lib, len(r.Maps), prefix, mapped, strings.Join(r.Maps, "\n"))
		}
	}}
}

// exampleCheck runs examples/cudaversion: libcuda at cuda answers cuDriverGetVersion with version
// ("12040 (CUDA 12.4)"), and NVRTC at nvrtc says 12.4.
func exampleCheck(cuda, version, nvrtc string) check {
	return check{"examples/cudaversion", func(t *testing.T, s *suite, env map[string]string) {
		stdout, stderr, code := s.exec(t, env, s.cudaversion)
		for _, line := range []string{
			"cuda  " + cuda + " (system-search)",
			"cuDriverGetVersion: " + version + "\n",
			"nvrtc " + nvrtc + " (site-packages)",
			"nvrtcVersion: 12.4\n",
		} {
			if code != 0 || !strings.Contains(stdout, line) {
				t.Errorf("cudaversion: exit %d, want a line with %q\nstdout: %s\nstderr: %s", code, line, stdout, stderr)
			}
		}
	}}
}

// answer is one --json line of find or load: a library, or a failure.
type answer struct {
	Name          string `json:"name"`
	Path          string `json:"path"`
	FoundVia      string `json:"found_via"`
	RealPath      string `json:"real_path"`
	AlreadyLoaded bool   `json:"already_loaded"`
	Error         string `json:"error"`
	Message       string `json:"message"`
}

func (s *suite) checkLib(t *testing.T, env map[string]string, op, lib string, w want, flags ...string) {
	stdout, stderr, code := s.exec(t, env, s.pathfinder, append([]string{op, "--json", lib}, flags...)...)
	var got answer
	found := false
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var a answer
		if json.Unmarshal([]byte(line), &a) == nil && a.Name == lib {
			got, found = a, true
			break
		}
	}
	cmd := strings.Join(append([]string{"pathfinder", op, "--json", lib}, flags...), " ")
	if w.fails == nil {
		switch {
		case code != 0 || !found || got.Error != "":
			t.Errorf("%s: exit %d, want %s via %q\nstdout: %s\nstderr: %s", cmd, code, w.path, w.foundVia, stdout, stderr)
		case got.Path != w.path || got.FoundVia != w.foundVia:
			t.Errorf("%s: got %s via %q, want %s via %q", cmd, got.Path, got.FoundVia, w.path, w.foundVia)
		case w.real != "" && got.RealPath != w.real:
			t.Errorf("%s: real_path %q, want %q", cmd, got.RealPath, w.real)
		case op == "load" && got.AlreadyLoaded != (w.foundVia == alreadyLoaded):
			t.Errorf("%s: already_loaded %v with found_via %q", cmd, got.AlreadyLoaded, got.FoundVia)
		}
		return
	}
	msg := got.Message
	if !found {
		msg = stderr
	}
	if code == 0 || got.Error == "" && found {
		t.Errorf("%s: exit %d, want a failure saying %q\nstdout: %s\nstderr: %s", cmd, code, w.fails, stdout, stderr)
		return
	}
	for _, say := range w.fails {
		if !strings.Contains(msg, say) {
			t.Errorf("%s: the message does not say %q: %s", cmd, say, msg)
		}
	}
	if w.kind != "" && got.Error != w.kind {
		t.Errorf("%s: error kind %q, want %q", cmd, got.Error, w.kind)
	}
}

// suite is the binaries under test, the environment every case starts from, and the counts.
type suite struct {
	pathfinder, loadmaps, cudaversion string
	base                              map[string]string

	mu     sync.Mutex
	counts map[string]*[2]int // layout -> run, passed
	order  []string
}

// exec runs exe in a fresh process whose environment is only the suite's base and env.
func (s *suite) exec(t *testing.T, env map[string]string, exe string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	for k, v := range s.base {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	return out.String(), errOut.String(), code
}

func (s *suite) count(layout string, passed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.counts[layout]
	if c == nil {
		c = new([2]int)
		s.counts[layout] = c
		s.order = append(s.order, layout)
	}
	c[0]++
	if passed {
		c[1]++
	}
}

func (s *suite) summary(layouts []layout) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	run, passed := 0, 0
	for _, l := range layouts {
		c := s.counts[l.name]
		if c == nil {
			c = new([2]int)
		}
		run, passed = run+c[0], passed+c[1]
		fmt.Fprintf(&b, "  %-55s %3d run %3d passed\n", l.name, c[0], c[1])
	}
	return fmt.Sprintf("realnv: %d cases run, %d passed, %d failed, in %d layouts of NVIDIA's libraries from Debian (%s)\n%s",
		run, passed, run-passed, len(layouts), realnv.Dir(), b.String())
}

// TestRealNVIDIA holds pathfinder against NVIDIA's own CUDA 12.4 (and 11.8) and driver 550 and 535
// libraries, as Debian ships them, in the layouts pip, conda, the toolkit, the driver and the loader
// make: every library in every layout is found and loaded, with real dlopen, by the pathfinder binary
// in a fresh process each, never in this one. It prints its counts; PATHFINDER_REALNV_SUMMARY names a
// file to write them to as well (.ci/run prints it).
func TestRealNVIDIA(t *testing.T) {
	if testing.Short() && !realnv.Required() {
		t.Skip("-short: builds binaries and loads NVIDIA's libraries")
	}
	dir := t.TempDir()
	tr := buildTrees(t, filepath.Join(dir, "trees")) // skips, saying why, when the libraries were not fetched
	s := &suite{counts: map[string]*[2]int{}}
	s.pathfinder, s.loadmaps, s.cudaversion = buildBinaries(t, filepath.Join(dir, "bin"))
	s.base = map[string]string{
		"HOME":                 filepath.Join(dir, "home"), // no user config, no user site-packages
		"XDG_CONFIG_HOME":      filepath.Join(dir, "home", ".config"),
		"XDG_CACHE_HOME":       filepath.Join(dir, "home", ".cache"),
		"PATH":                 filepath.Join(dir, "empty-path"), // no python3 to find site-packages through
		"PATHFINDER_CACHE_DIR": filepath.Join(dir, "cache"),      // one cache for the suite, as a user has
	}
	for _, d := range []string{s.base["HOME"], s.base["PATH"]} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	all := append(layouts(tr), forestLayouts(tr, buildForests(t, tr, filepath.Join(dir, "forests")))...)
	all = append(all, compatLayouts(tr, buildCompatTrees(t, tr, filepath.Join(dir, "compat")))...)
	t.Run("layouts", func(t *testing.T) {
		for _, l := range all {
			t.Run(l.name, func(t *testing.T) {
				t.Parallel()
				for _, c := range l.checks {
					t.Run(c.name, func(t *testing.T) {
						t.Parallel()
						t.Cleanup(func() {
							if !t.Skipped() { // cuda.pathfinder's answers, where it is not at hand
								s.count(l.name, !t.Failed())
							}
						})
						c.run(t, s, l.env)
					})
				}
			})
		}
	})
	summary := s.summary(all)
	t.Log("\n" + summary)
	if f := os.Getenv("PATHFINDER_REALNV_SUMMARY"); f != "" {
		if err := os.WriteFile(f, []byte(summary), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// buildBinaries builds, once, without cgo, the pathfinder command, loadmaps and the cudaversion example.
func buildBinaries(t *testing.T, dir string) (pathfinder, loadmaps, cudaversion string) {
	trackSources(t)
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"github.com/pathfinder-dev/pathfinder/cmd/pathfinder",
		"github.com/pathfinder-dev/pathfinder/integration/loadmaps",
		"github.com/pathfinder-dev/pathfinder/examples/cudaversion")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "pathfinder"), filepath.Join(dir, "loadmaps"), filepath.Join(dir, "cudaversion")
}

// trackSources stats every file of the module. go test caches a passing result until something the
// test itself read changes; the binaries built here come from these files, so this is what it read.
func trackSources(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			os.Stat(p)
		}
		return nil
	})
}
