//go:build !pathfinder_static

package driver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/ebitengine/purego"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// These tests use NVIDIA's own user-space driver, 550.163.01 (Debian trixie) and 535.261.03
// (bookworm): libcuda, libnvidia-ml and nvidia-smi, unpacked but never installed.

const debianLibDir = "usr/lib/x86_64-linux-gnu"

// realDriver is one unpacked Debian user-space driver.
type realDriver struct {
	version            string // 550.163.01
	cudaDir, nvmlDir   string // the directories holding libcuda.so.1 and libnvidia-ml.so.1
	smi                string // nvidia-smi
	cudaFile, nvmlFile string // libcuda.so.<version>, libnvidia-ml.so.<version>
}

func getRealDriver(t *testing.T, suite string) realDriver {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("the unpacked Debian packages are amd64's")
	}
	cuda, nvml, smi := realnv.Get(t, suite+"/libcuda1"), realnv.Get(t, suite+"/libnvidia-ml1"), realnv.Get(t, suite+"/nvidia-smi")
	d := realDriver{
		version: strings.SplitN(cuda.Version, "-", 2)[0], // Debian's 550.163.01-2
		cudaDir: cuda.Path(debianLibDir + "/nvidia/current"), nvmlDir: nvml.Path(debianLibDir + "/nvidia/current"),
		smi: smi.Path("usr/lib/nvidia/current/nvidia-smi"),
	}
	d.cudaFile, d.nvmlFile = "libcuda.so."+d.version, "libnvidia-ml.so."+d.version
	return d
}

// install lays the driver's two libraries out in root as Debian does: the files under nvidia/current,
// reached from the multiarch directory through the alternatives' absolute symlinks.
func (d realDriver) install(t *testing.T, root string) {
	t.Helper()
	for _, l := range []struct{ dir, file, soname string }{{d.cudaDir, d.cudaFile, "libcuda.so.1"}, {d.nvmlDir, d.nvmlFile, "libnvidia-ml.so.1"}} {
		cur := filepath.Join(root, debianLibDir, "nvidia/current")
		realnv.Place(t, filepath.Join(l.dir, l.file), filepath.Join(cur, l.file))
		filetree.Symlink(t, l.file, filepath.Join(cur, l.soname))
		alt := "/etc/alternatives/nvidia--" + l.soname + "-x86_64-linux-gnu"
		filetree.Symlink(t, "/"+debianLibDir+"/nvidia/current/"+l.soname, filepath.Join(root, alt))
		filetree.Symlink(t, alt, filepath.Join(root, debianLibDir, l.soname))
	}
}

// devSnapshot lists a /dev: each entry's name, type, permissions and device number.
func devSnapshot(t *testing.T, dev string) []string {
	t.Helper()
	entries, err := os.ReadDir(dev)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(dev, e.Name()))
		if err != nil {
			continue // gone between the listing and the stat: not ours
		}
		var rdev uint64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			rdev = st.Rdev
		}
		out = append(out, fmt.Sprintf("%s %s %d", e.Name(), fi.Mode(), rdev))
	}
	sort.Strings(out)
	return out
}

// requireDevUnchanged fails the test when dev differs from before, after removing the NVIDIA nodes
// that appeared: a probe that created them must not leave this machine changed for the next test.
func requireDevUnchanged(t *testing.T, dev string, before []string, what string) {
	t.Helper()
	after := devSnapshot(t, dev)
	if slices.Equal(before, after) {
		return
	}
	var created []string
	for _, a := range after {
		if !slices.Contains(before, a) {
			created = append(created, a)
			if name := strings.Fields(a)[0]; strings.HasPrefix(name, "nvidia") {
				os.Remove(filepath.Join(dev, name))
			}
		}
	}
	t.Fatalf("%s changed %s: new or changed entries %q", what, dev, created)
}

// TestProbe_readOnly points every method at NVIDIA's real libraries and nvidia-smi, runs each method
// alone and then all of them, on this machine (Root "/") and on a captured machine whose files show
// a working driver, and requires /dev to be unchanged after every run. Run as root on a machine
// without the nvidia kernel module, NVML's and libcuda's initialisation create /dev/nvidiactl; the
// probe must not get there. (As another user nothing could be created: the test still runs.)
func TestProbe_readOnly(t *testing.T) {
	for _, suite := range []string{"trixie", "bookworm"} {
		t.Run(suite, func(t *testing.T) {
			d := getRealDriver(t, suite)
			bin := t.TempDir()
			smi := filepath.Join(bin, "nvidia-smi")
			script := "#!/bin/sh\nLD_LIBRARY_PATH=" + d.nvmlDir + " exec " + d.smi + " \"$@\"\n"
			if err := os.WriteFile(smi, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{
				envNVMLLibrary: filepath.Join(d.nvmlDir, "libnvidia-ml.so.1"), envCUDALibrary: filepath.Join(d.cudaDir, "libcuda.so.1"),
				"PATH": bin, "LD_LIBRARY_PATH": d.nvmlDir + ":" + d.cudaDir,
			}
			captured := filetree.New(t, liveFiles(nil))
			runs := [][]string{nil}
			for _, m := range MethodNames() {
				runs = append(runs, []string{m})
			}
			for _, root := range []string{"/", captured} {
				for _, methods := range runs {
					what := "probe of " + root + " with methods " + strings.Join(methods, ",")
					if methods == nil {
						what = "probe of " + root + " with every method"
					}
					before, beforeCaptured := devSnapshot(t, "/dev"), devSnapshot(t, filepath.Join(captured, "dev"))
					r := Probe(context.Background(), Options{Root: root, Methods: methods, LookupEnv: env(vars)})
					requireDevUnchanged(t, "/dev", before, what)
					requireDevUnchanged(t, filepath.Join(captured, "dev"), beforeCaptured, what)
					if root == "/" && exists("/proc/driver/nvidia") {
						continue // a machine with the driver loaded may run its code
					}
					for _, m := range r.Methods {
						if slices.Contains(driverViews, m.Name) && (m.Outcome != OutcomeSkipped || !strings.HasPrefix(m.Detail, "not run: ")) {
							t.Errorf("%s: %s %s: %s", what, m.Name, m.Outcome, m.Detail)
						}
					}
				}
			}
		})
	}
}

// TestProbe_statesWithRealLibraries names the state of captured machines whose user-space driver is
// NVIDIA's real one, read from the file the loader would map: installed without its kernel module,
// with another module's version, without device access, and working.
func TestProbe_statesWithRealLibraries(t *testing.T) {
	d550, d535 := getRealDriver(t, "trixie"), getRealDriver(t, "bookworm")
	module := func(v string) map[string]string {
		return map[string]string{
			"/sys/module/nvidia/version":  v + "\n",
			"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + v + "  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Wed Jun 18 00:00:00 UTC 2025\n",
		}
	}
	withCtl := func(files map[string]string) map[string]string {
		files["/dev/nvidiactl"] = ""
		return files
	}
	tests := []struct {
		name      string
		files     map[string]string
		libs      realDriver
		state     State
		kernel    string
		userSpace string
		summary   []string
		maxCUDA   string // and its source: "" for the kernel module's version, else MaxCUDAFromUserSpace
		maxFrom   string
	}{
		{name: "installed, module not loaded", libs: d550, state: StateNotLoaded, userSpace: "550.163.01", maxCUDA: "12.4", maxFrom: MaxCUDAFromUserSpace,
			summary: []string{"NVIDIA's user-space driver 550.163.01 is installed, but the nvidia kernel module is not loaded"}},
		{name: "535 installed, module not loaded", libs: d535, state: StateNotLoaded, userSpace: "535.261.03", maxCUDA: "12.2", maxFrom: MaxCUDAFromUserSpace,
			summary: []string{"NVIDIA's user-space driver 535.261.03 is installed, but the nvidia kernel module is not loaded"}},
		{name: "kernel 550.144.03, libraries 535.261.03", files: withCtl(module("550.144.03")), libs: d535, state: StateMismatch, kernel: "550.144.03", userSpace: "535.261.03", maxCUDA: "12.4",
			summary: []string{"the nvidia kernel module is 550.144.03 but libnvidia-ml.so.1 is 535.261.03", "and libcuda.so.1 is 535.261.03", "Driver/library version mismatch"}},
		{name: "container without device access", files: module("550.163.01"), libs: d550, state: StateNoDevices, kernel: "550.163.01", userSpace: "550.163.01", maxCUDA: "12.4",
			summary: []string{"the nvidia kernel module 550.163.01 is loaded, but /dev/nvidiactl does not exist"}},
		{name: "working", files: withCtl(module("535.261.03")), libs: d535, state: StateWorking, kernel: "535.261.03", userSpace: "535.261.03", maxCUDA: "12.2",
			summary: []string{"driver 535.261.03 is loaded, its device nodes exist and its libraries are the same version; its own code was not run"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filetree.New(t, tc.files)
			tc.libs.install(t, root)
			r := probe(t, root, nil, nil)
			if r.State != tc.state || r.DriverVersion != tc.kernel || r.UserSpaceVersion != tc.userSpace {
				t.Fatalf("state %q driver %q user-space %q (%s); want %q %q %q", r.State, r.DriverVersion, r.UserSpaceVersion, r.Summary, tc.state, tc.kernel, tc.userSpace)
			}
			if r.MaxCUDA != tc.maxCUDA || r.MaxCUDASource != tc.maxFrom {
				t.Fatalf("max CUDA %q from %q; want %q from %q", r.MaxCUDA, r.MaxCUDASource, tc.maxCUDA, tc.maxFrom)
			}
			for _, s := range tc.summary {
				if !strings.Contains(r.Summary, s) {
					t.Errorf("summary %q lacks %q", r.Summary, s)
				}
			}
			if r.Hint == "" && tc.state != StateWorking {
				t.Errorf("no hint for %s", tc.state)
			}
			for _, l := range r.UserSpace {
				if want := "/" + debianLibDir + "/" + l.Soname; l.Path != want || l.Via != "default-dirs" || !strings.HasSuffix(l.RealPath, ".so."+tc.userSpace) {
					t.Errorf("%+v, want %s found in the default directories, mapping the versioned file", l, want)
				}
			}
		})
	}
}

// TestProbe_realLibrariesOnThisMachine finds the real 550 libraries through LD_LIBRARY_PATH on this
// machine, where no kernel module is loaded, and reads their version without loading them.
func TestProbe_realLibrariesOnThisMachine(t *testing.T) {
	if exists("/sys/module/nvidia") || exists("/proc/driver/nvidia") {
		t.Skip("this machine has an nvidia kernel module")
	}
	d := getRealDriver(t, "trixie")
	before := devSnapshot(t, "/dev")
	r := Probe(context.Background(), Options{LookupEnv: env(map[string]string{"LD_LIBRARY_PATH": d.cudaDir + ":" + d.nvmlDir})})
	requireDevUnchanged(t, "/dev", before, "the default probe")
	if r.State != StateNotLoaded || r.UserSpaceVersion != "550.163.01" || r.Working() {
		t.Fatalf("state %s user-space %s: %s", r.State, r.UserSpaceVersion, r.Summary)
	}
	cuda := r.UserSpace[0]
	if cuda.Path != filepath.Join(d.cudaDir, "libcuda.so.1") || cuda.RealPath != filepath.Join(d.cudaDir, "libcuda.so.550.163.01") || cuda.Via != "LD_LIBRARY_PATH" {
		t.Fatalf("%+v", cuda)
	}
}

// TestProbe_realNvidiaSMI runs NVIDIA's nvidia-smi where the files say the driver's code may run but
// no driver answers — a module listed, its nodes there, nothing behind them — and reads its real
// failures: exit 9 when it cannot communicate with the driver, exit 12 when it finds no
// libnvidia-ml. Run as root it could create /dev/nvidiactl, so it runs without CAP_MKNOD (setpriv).
func TestProbe_realNvidiaSMI(t *testing.T) {
	if exists("/proc/driver/nvidia") {
		t.Skip("this machine has a driver that nvidia-smi would reach")
	}
	d := getRealDriver(t, "trixie")
	var drop string
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv, which keeps nvidia-smi from creating /dev/nvidiactl")
		}
		drop = setpriv + " --bounding-set -mknod "
	}
	tests := []struct {
		name, libraryPath string
		state             State
		detail            []string
	}{
		{name: "no driver behind the nodes", libraryPath: d.nvmlDir, state: StateNotAnswering,
			detail: []string{"exited 9 (cannot communicate with the NVIDIA driver)", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"}},
		{name: "no libnvidia-ml", libraryPath: t.TempDir(), state: StateNoUserSpace,
			detail: []string{"exited 12 (NVML library not found)", "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if h, err := purego.Dlopen("libnvidia-ml.so.1", purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil && tc.state == StateNoUserSpace {
				purego.Dlclose(h)
				t.Skip("this machine's loader finds a libnvidia-ml.so.1")
			}
			smi := filepath.Join(t.TempDir(), "nvidia-smi")
			script := "#!/bin/sh\nLD_LIBRARY_PATH=" + tc.libraryPath + " exec " + drop + d.smi + " \"$@\"\n"
			if err := os.WriteFile(smi, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			root := filetree.New(t, liveFiles(map[string]string{"/sys/module/nvidia/version": "550.163.01\n"}))
			if tc.state == StateNotAnswering {
				d.install(t, root)
			}
			before := devSnapshot(t, "/dev")
			r := Probe(context.Background(), Options{Root: root, rootIsLive: true, LookupEnv: env(nil),
				Methods: []string{methodUserSpace, methodSysfs, methodNvidiaSMI}, LookPath: func(string) (string, error) { return smi, nil }})
			requireDevUnchanged(t, "/dev", before, "nvidia-smi")
			wantOutcome(t, r, methodNvidiaSMI, OutcomeFailed, tc.detail...)
			if r.State != tc.state || r.Hint == "" {
				t.Fatalf("state %s (%s), want %s", r.State, r.Summary, tc.state)
			}
		})
	}
}

// TestProbe_mixedRealLibraries: a libcuda from NVIDIA's forward-compatibility package is meant to be
// newer than the module and is no mismatch; libcuda and libnvidia-ml of two drivers are.
func TestProbe_mixedRealLibraries(t *testing.T) {
	d550, d535 := getRealDriver(t, "trixie"), getRealDriver(t, "bookworm")
	t.Run("forward compatibility", func(t *testing.T) {
		root := filetree.New(t, liveFiles(map[string]string{"/sys/module/nvidia/version": "535.261.03\n"}))
		d535.install(t, root)
		compat := "/usr/local/cuda-12.4/compat"
		realnv.Place(t, filepath.Join(d550.cudaDir, d550.cudaFile), filepath.Join(root, compat, d550.cudaFile))
		filetree.Symlink(t, d550.cudaFile, filepath.Join(root, compat, "libcuda.so.1"))
		r := Probe(context.Background(), Options{Root: root, rootIsLive: true, Methods: fileMethods, LookupEnv: env(map[string]string{"LD_LIBRARY_PATH": compat})})
		cuda := r.UserSpace[0]
		if r.State != StateWorking || r.UserSpaceVersion != "535.261.03" || !cuda.Compat || cuda.Version != "550.163.01" || cuda.Via != "LD_LIBRARY_PATH" {
			t.Fatalf("state %s (%s), user-space %s, libcuda %+v", r.State, r.Summary, r.UserSpaceVersion, cuda)
		}
	})
	t.Run("two drivers' libraries, no module", func(t *testing.T) {
		root := filetree.New(t, nil)
		d550.install(t, root)
		// bookworm's libnvidia-ml over trixie's, as a half-finished upgrade or downgrade leaves it.
		cur := filepath.Join(root, debianLibDir, "nvidia/current")
		os.Remove(filepath.Join(cur, "libnvidia-ml.so.1"))
		realnv.Place(t, filepath.Join(d535.nvmlDir, d535.nvmlFile), filepath.Join(cur, d535.nvmlFile))
		filetree.Symlink(t, d535.nvmlFile, filepath.Join(cur, "libnvidia-ml.so.1"))
		r := probe(t, root, fileMethods, nil)
		want := "libcuda.so.1 is 550.163.01 (/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.550.163.01) but libnvidia-ml.so.1 is 535.261.03"
		if r.State != StateMismatch || !strings.Contains(r.Summary, want) {
			t.Fatalf("state %s: %s", r.State, r.Summary)
		}
		// No module is loaded: there is none to unload, and reloading one mends nothing.
		if !strings.HasPrefix(r.Hint, "remove one of the two driver installations") || strings.Contains(r.Hint, "unload") {
			t.Fatalf("hint %q; want it to say to remove one of the two installations", r.Hint)
		}
	})
}

// TestProbe_userSpaceLookup: the override variables name the files the probe reads; a captured
// root's loader never sees this process's LD_LIBRARY_PATH.
func TestProbe_userSpaceLookup(t *testing.T) {
	d := getRealDriver(t, "trixie")
	r := probe(t, filetree.New(t, nil), []string{methodUserSpace}, map[string]string{envCUDALibrary: filepath.Join(d.cudaDir, "libcuda.so.1")})
	if cuda := r.UserSpace[0]; cuda.Via != envCUDALibrary || cuda.Version != "550.163.01" || cuda.RealPath != filepath.Join(d.cudaDir, d.cudaFile) {
		t.Fatalf("%+v", cuda)
	}
	root := filetree.New(t, nil)
	realnv.Place(t, filepath.Join(d.cudaDir, d.cudaFile), filepath.Join(root, "opt/driver", d.cudaFile))
	filetree.Symlink(t, d.cudaFile, filepath.Join(root, "opt/driver/libcuda.so.1"))
	for _, live := range []bool{false, true} {
		r := Probe(context.Background(), Options{Root: root, rootIsLive: live, Methods: []string{methodUserSpace}, LookupEnv: env(map[string]string{"LD_LIBRARY_PATH": "/opt/driver"})})
		if found := r.UserSpaceVersion == "550.163.01"; found != live {
			t.Errorf("a root that stands for this machine: %v; LD_LIBRARY_PATH followed: %v (%s)", live, found, outcome(t, r, methodUserSpace).Detail)
		}
	}
}
