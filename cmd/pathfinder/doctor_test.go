package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/doctor"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/report"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// doctorConfig keeps the search to the plugin steps, so that what this machine's loader finds
// cannot change a golden file.
const doctorConfig = `[search]
order = ["wheels", "conda", "envroots"]

[library.cuda]
order = ["envroots"]

[library.nvml]
order = ["envroots"]

[library.nvcudla]
order = ["envroots"]
`

// doctorSetup is one situation: the driver's captured machine, the trees and the environment.
type doctorSetup struct {
	env    *testEnv
	base   string // every path the test makes is under it; "$TMP" in the golden files
	root   string // the captured machine doctor probes
	config string
}

func newDoctorSetup(t *testing.T) *doctorSetup {
	t.Helper()
	base := t.TempDir()
	s := &doctorSetup{env: isolate(t), base: base, root: filepath.Join(base, "machine"), config: filepath.Join(base, "pathfinder.toml")}
	os.MkdirAll(s.root, 0o755)
	os.MkdirAll(filepath.Join(base, "bin"), 0o755)
	if err := os.WriteFile(s.config, []byte(doctorConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// lib builds a shared library with the soname of its file name at rel under base.
func (s *doctorSetup) lib(t *testing.T, rel string) string {
	p := filepath.Join(s.base, rel)
	gccLib(t, p, filepath.Base(p))
	return p
}

// run runs doctor with the setup's config and captured machine, and returns its output with the
// temporary directory written as $TMP.
func (s *doctorSetup) run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	s.env.Setenv("PATH", filepath.Join(s.base, "bin")) // no python3: the site-packages are the test's alone
	out, errOut, code := s.env.run(t, append([]string{"doctor", "--config", s.config, "--root", s.root}, args...)...)
	if errOut != "" {
		t.Fatalf("stderr: %s", errOut)
	}
	return strings.ReplaceAll(out, s.base, "$TMP"), code
}

// TestDoctor_situations: one golden file per setup failure doctor diagnoses, and the summary that
// leads: how many libraries were found and where from, and the driver's state.
func TestDoctor_situations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, s *doctorSetup) []string // extra arguments
		code  int
	}{
		{name: "nothing", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string { return nil }},
		{name: "no-problems", code: exitOK, setup: func(t *testing.T, s *doctorSetup) []string {
			s.env.Setenv("PATHFINDER_DRIVER_VERSION", "580.65.06")
			s.env.Setenv("PATHFINDER_SITE_PACKAGES", filepath.Join(s.base, "site"))
			s.lib(t, "site/nvidia/cu13/lib/libcudart.so.13")
			s.env.Setenv("CONDA_PREFIX", filepath.Join(s.base, "conda"))
			s.lib(t, "conda/lib/libnvjpeg.so.13")
			return nil
		}},
		{name: "kernel-module-not-loaded", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.root = machine(t, "trixie", nil)
			return nil
		}},
		{name: "kernel-user-space-mismatch", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.root = machine(t, "bookworm", kernelModule("550.163.01", true))
			return nil
		}},
		{name: "cudart-newer-than-driver", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			files := kernelModule("550.163.01", true)
			for _, bus := range []string{"0000:18:00.0", "0000:65:00.0"} { // two H100s on the PCI bus
				for f, v := range map[string]string{"vendor": "0x10de", "device": "0x2330", "class": "0x030200"} {
					files["/sys/bus/pci/devices/"+bus+"/"+f] = v + "\n"
				}
			}
			s.root = machine(t, "trixie", files)
			s.env.Setenv("PATHFINDER_SITE_PACKAGES", filepath.Join(s.base, "site"))
			s.lib(t, "site/nvidia/cu13/lib/libcudart.so.13")
			return nil
		}},
		// The compatibility check on, as it is by default: the search passes over the CUDA 13 runtime
		// that driver 550 cannot run and takes the CUDA 12 one beside it; doctor says so, and what
		// remains a problem is the mixed install, not a runtime too new.
		{name: "cu13-passed-over-for-cu12", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.env.Setenv("PATHFINDER_COMPATIBILITY", "strict")
			s.root = machine(t, "trixie", kernelModule("550.163.01", true))
			s.env.Setenv("PATHFINDER_SITE_PACKAGES", filepath.Join(s.base, "site"))
			s.lib(t, "site/nvidia/cu13/lib/libcudart.so.13")
			cudart12 := realnv.Get(t, "trixie/libcudart12").Path("usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127")
			realnv.Place(t, cudart12, filepath.Join(s.base, "site/nvidia/cuda_runtime/lib/libcudart.so.12"))
			return nil
		}},
		{name: "nothing-runs", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.env.Setenv("PATHFINDER_COMPATIBILITY", "strict")
			s.root = machine(t, "trixie", kernelModule("550.163.01", true))
			s.env.Setenv("PATHFINDER_SITE_PACKAGES", filepath.Join(s.base, "site"))
			s.lib(t, "site/nvidia/cu13/lib/libcudart.so.13")
			return nil
		}},
		{name: "stub-libcuda-on-ld-library-path", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.env.Setenv("PATHFINDER_DRIVER_VERSION", "580.65.06")
			stub := filepath.Join(s.base, "cuda/lib64/stubs/libcuda.so")
			gccLib(t, stub, "libcuda.so.1")
			s.env.Setenv("LD_LIBRARY_PATH", filepath.Join(s.base, "cuda/lib64")+":"+filepath.Dir(stub))
			return nil
		}},
		{name: "stub-libcuda-linked-into-a-system-directory", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			// The toolkit's stub linked where the driver's libcuda belongs, a common attempt to make
			// a build link that then breaks every CUDA program.
			gccLib(t, filepath.Join(s.root, "usr/local/cuda-12.4/targets/x86_64-linux/lib/stubs/libcuda.so"), "libcuda.so.1")
			filetree.Symlink(t, "/usr/local/cuda-12.4/targets/x86_64-linux/lib/stubs/libcuda.so", filepath.Join(s.root, "usr/lib/x86_64-linux-gnu/libcuda.so.1"))
			return nil
		}},
		{name: "cu12-and-cu13-wheels", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.env.Setenv("PATHFINDER_DRIVER_VERSION", "580.65.06")
			s.env.Setenv("PATHFINDER_SITE_PACKAGES", filepath.Join(s.base, "site"))
			s.lib(t, "site/nvidia/cu13/lib/libcudart.so.13")
			s.lib(t, "site/nvidia/cu13/lib/libnvrtc.so.13")
			// CUDA 12's runtime from Debian, where a cu12 wheel puts it.
			cudart12 := realnv.Get(t, "trixie/libcudart12").Path("usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127")
			realnv.Place(t, cudart12, filepath.Join(s.base, "site/nvidia/cuda_runtime/lib/libcudart.so.12"))
			s.lib(t, "site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
			return nil
		}},
		{name: "ld-library-path-shadows-wheels", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.env.Setenv("PATHFINDER_DRIVER_VERSION", "580.65.06")
			s.env.Setenv("PATHFINDER_SITE_PACKAGES", filepath.Join(s.base, "site"))
			s.lib(t, "site/nvidia/cu13/lib/libcublasLt.so.13")
			s.lib(t, "site/nvidia/cu13/lib/libcublas.so.13")
			s.lib(t, "site/nvidia/cu13/lib/libcudart.so.13")
			s.lib(t, "cuda/lib64/libcublasLt.so.13")
			s.lib(t, "cuda/lib64/libcublas.so.13")
			// cudart's only copy on LD_LIBRARY_PATH is the venv's own: that shadows nothing.
			s.env.Setenv("LD_LIBRARY_PATH", filepath.Join(s.base, "cuda/lib64")+":"+filepath.Join(s.base, "site/nvidia/cu13/lib"))
			return nil
		}},
		{name: "cuda-home-passed-over", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.env.Setenv("PATHFINDER_DRIVER_VERSION", "580.65.06")
			s.lib(t, "cuda-12.4/lib64/libcudart.so.12")
			s.env.Setenv("CUDA_HOME", filepath.Join(s.base, "cuda-12.4"))
			s.env.Setenv("CUDA_PATH", filepath.Join(s.base, "cuda-13.0")) // does not exist
			return nil
		}},
		{name: "driver-version-not-a-version", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.env.Setenv("PATHFINDER_DRIVER_VERSION", "banana")
			return nil
		}},
		{name: "two-copies-in-a-process", code: exitNotFound, setup: func(t *testing.T, s *doctorSetup) []string {
			s.env.Setenv("PATHFINDER_DRIVER_VERSION", "580.65.06")
			a, b := s.lib(t, "venv/nvidia/cuda_runtime/lib/libcudart.so.12"), s.lib(t, "cuda-12.4/lib64/libcudart.so.12")
			return []string{"--pid", fmt.Sprint(startProcessWith(t, a, b))}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newDoctorSetup(t)
			args := tc.setup(t, s)
			out, code := s.run(t, args...)
			out = strings.ReplaceAll(out, fmt.Sprintf("process %s ", strings.TrimPrefix(strings.Join(args, " "), "--pid ")), "process $PID ")
			golden(t, "doctor/"+tc.name+".txt", out)
			if code != tc.code {
				t.Fatalf("exit %d, want %d", code, tc.code)
			}
		})
	}
}

// TestDoctor_usage: bad flags, and a directory or process a flag names that is not there, are usage
// errors, with the usage line.
func TestDoctor_usage(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	const doctorUsage = "usage: pathfinder doctor [FLAGS]\nrun 'pathfinder help doctor' for details\n"
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--root", "/nonexistent/machine"}, "pathfinder: doctor: --root /nonexistent/machine: no such directory\n" + doctorUsage},
		{[]string{"--root", t.TempDir(), "--pid", "999999999"}, "pathfinder: doctor: --pid: no process 999999999 (its libraries are read from /proc/999999999/maps, on Linux)\n" + doctorUsage},
		{[]string{"--pid", "-3"}, "pathfinder: doctor: --pid -3: not a process id\n" + doctorUsage},
		{[]string{"cudart"}, "pathfinder: doctor: takes no arguments\n" + doctorUsage},
	} {
		if _, errOut, code := e.run(t, append([]string{"doctor"}, tc.args...)...); code != exitUsage || errOut != tc.stderr {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, errOut, exitUsage, tc.stderr)
		}
	}
}

// TestDoctor_all: --all adds the settings read and every library, found or not and why.
func TestDoctor_all(t *testing.T) {
	t.Parallel()
	s := newDoctorSetup(t)
	s.env.Setenv("PATHFINDER_DRIVER_VERSION", "580.65.06")
	s.env.Setenv("PATHFINDER_SITE_PACKAGES", filepath.Join(s.base, "site"))
	s.env.Setenv("PATHFINDER_NO_CACHE", "1")
	s.lib(t, "site/nvidia/cu13/lib/libcudart.so.13")
	out, code := s.run(t, "--all")
	golden(t, "doctor/all.txt", out)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	short, _ := s.run(t)
	if lines := strings.Count(short, "\n"); lines > 12 {
		t.Fatalf("doctor without --all is %d lines:\n%s", lines, short)
	}
}

// TestDoctor_hostInputs covers the diagnostics of what the host tells about itself, over facts built
// by hand: a library found but unloadable, an ignored input, a cache that is off without being
// turned off, one that cannot be written. (TestDoctor_hostInputsEndToEnd, TestDoctor_cacheOff and
// TestCache_unwritable hold them on real trees and disks.)
func TestDoctor_hostInputs(t *testing.T) {
	t.Parallel()
	sonames := func(names ...string) abi.Descriptor { return abi.Descriptor{LinuxSonames: names} }
	facts := func() *doctor.Facts {
		return &doctor.Facts{
			Platform: abi.Platform{OS: "linux", Arch: "amd64", Libc: "glibc"}, Getenv: func(string) string { return "" },
			Cache:  inspect.Cache{Dir: "/home/u/.cache/pathfinder"},
			Driver: &driver.Report{State: driver.StatePinned, Summary: "driver 580.65.06, pinned by PATHFINDER_DRIVER_VERSION; the machine was not asked", MaxCUDA: "13.0", DriverVersion: "580.65.06"},
			Libraries: []doctor.Answer{
				{LibraryInfo: search.LibraryInfo{Name: "cudart", Category: "ctk", Available: true}, Descriptor: sonames("libcudart.so.13", "libcudart.so.12"),
					Found: &search.Library{Name: "cudart", Path: "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13", FoundVia: "site-packages"}},
				{LibraryInfo: search.LibraryInfo{Name: "nvrtc", Category: "ctk", Available: true}, Descriptor: sonames("libnvrtc.so.13", "libnvrtc.so.12"),
					Found: &search.Library{Name: "nvrtc", Path: "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13", FoundVia: "site-packages"}},
				{LibraryInfo: search.LibraryInfo{Name: "cublas", Category: "ctk", Available: true}, Descriptor: sonames("libcublas.so.13"), Err: errors.New("\"cublas\" not found")},
			},
		}
	}
	unloadable := facts()
	unloadable.Libraries[1].Found.LoadProblem = "it needs GLIBC_2.38 (in __isoc23_strtol), and this system's libc.so.6 is glibc 2.36"
	ignored := facts()
	ignored.Ignored = []report.Ignored{{Name: "CUDA_PATH", Value: "cuda-13.0", Reason: "a relative path: pathfinder never resolves one against the working directory", Why: report.Relative}}
	cacheOff := facts()
	cacheOff.Cache = inspect.Cache{Off: "/nonexistent/.cache/pathfinder (from $HOME): /nonexistent does not exist, and only the cache's own directories are made"}
	cacheUnwritable := facts()
	cacheUnwritable.Cache.WriteError = "no space left on device"
	for name, d := range map[string]*doctor.Facts{"unloadable": unloadable, "ignored-input": ignored, "cache-off": cacheOff, "cache-unwritable": cacheUnwritable} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			problems := doctor.Diagnose(d)
			var b strings.Builder
			writeDoctor(&b, d, problems, false)
			golden(t, "doctor/"+name+".txt", b.String())
			if len(problems) != 1 {
				t.Fatalf("%d problems", len(problems))
			}
		})
	}
}

// TestDoctor_hostInputsEndToEnd holds the two host-fed diagnostics against real trees: a variable
// the searches pass over (a relative CUDA_PATH), and a wheel's library the loader would refuse
// (Debian's libnccl 2.22 needs GLIBC_2.38), both as the host tells them.
func TestDoctor_hostInputsEndToEnd(t *testing.T) {
	t.Parallel()
	s := newDoctorSetup(t)
	nccl := realnv.Get(t, "trixie/libnccl2").Path("usr/lib/x86_64-linux-gnu/libnccl.so.2")
	if out, _ := exec.Command("ldd", "--version").Output(); !strings.HasSuffix(strings.SplitN(string(out), "\n", 2)[0], " 2.36") {
		t.Skip("the golden output is glibc 2.36's (Debian 12, as CI): GLIBC_2.38 missing, 2.36 the newest")
	}
	s.env.Setenv("PATHFINDER_DRIVER_VERSION", "580.65.06")
	s.env.Setenv("CUDA_PATH", "cuda-13.0") // relative: ignored
	site := filepath.Join(s.base, "site")
	s.env.Setenv("PATHFINDER_SITE_PACKAGES", site)
	realnv.Copy(t, nccl, filepath.Join(site, "nvidia/nccl/lib/libnccl.so.2"))
	f, err := engine.New(engine.Options{ConfigFile: s.config, LookupEnv: s.env.LookupEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.IgnoredInputs()) != 1 {
		t.Fatalf("ignored inputs: %v", f.IgnoredInputs())
	}
	out, code := s.run(t)
	golden(t, "doctor/ignored-input-end-to-end.txt", out)
	if code != exitNotFound || !strings.Contains(out, "GLIBC_2.38") || !strings.Contains(out, "CUDA_PATH") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestDoctor_relativeDriverLibrary: a driver library named by a relative path is ignored by the
// probe, and doctor's fix for it is the one for every relative path, as for the searches' own.
func TestDoctor_relativeDriverLibrary(t *testing.T) {
	t.Parallel()
	s := newDoctorSetup(t)
	s.env.Setenv("PATHFINDER_NVML_LIBRARY", "lib/libnvidia-ml.so.1")
	out, _ := s.run(t)
	want := "give PATHFINDER_NVML_LIBRARY an absolute path (pathfinder never resolves one against the working directory), or unset it"
	if !strings.Contains(out, "PATHFINDER_NVML_LIBRARY=lib/libnvidia-ml.so.1 is ignored") || !strings.Contains(out, want) {
		t.Fatalf("doctor does not give the relative path's fix:\n%s", out)
	}
}

// startProcessWith starts a process that dlopens each library by path and waits; it is stopped
// when the test ends.
func startProcessWith(t *testing.T, libs ...string) int {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "hold.c")
	os.WriteFile(src, []byte(`#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++)
		if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	puts("ready");
	fflush(stdout);
	char c;
	return (int)read(0, &c, 1);
}
`), 0o644)
	bin := filepath.Join(dir, "hold")
	if out, err := exec.Command("gcc", "-o", bin, src, "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, libs...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the process holding %v: %q %v", libs, line, err)
	}
	return cmd.Process.Pid
}
