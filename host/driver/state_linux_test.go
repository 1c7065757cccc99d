//go:build !pathfinder_static

package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestProbe_states names each state from files, fake nvidia-smi answers and stub libraries, with
// the versions and a hint.
func TestProbe_states(t *testing.T) {
	cudaStub := buildStub(t, "libcuda.so.1", cudaStubC)
	smiFakeExit := func(code string) func(t *testing.T) string {
		return func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "nvidia-smi")
			os.WriteFile(p, []byte("#!/bin/sh\necho 'Failed to initialize NVML: Driver/library version mismatch'\nexit "+code+"\n"), 0o755)
			return p
		}
	}
	tests := []struct {
		name    string
		files   map[string]string
		copy    map[string]string // stub library → path in the root
		vars    map[string]string
		smi     func(t *testing.T) string
		methods []string
		state   State
		summary string
		hint    string
	}{
		{name: "nothing at all", state: StateNoDriver, summary: "no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1", hint: "install NVIDIA's driver"},
		{name: "a GPU and no driver", files: map[string]string{"/sys/bus/pci/devices/0000:65:00.0/vendor": "0x10de\n", "/sys/bus/pci/devices/0000:65:00.0/class": "0x030200\n", "/sys/bus/pci/devices/0000:65:00.0/device": "0x2330\n"},
			state: StateNoDriver, summary: "no NVIDIA driver for the 1 GPU on the PCI bus"},
		{name: "the toolkit's stub on LD_LIBRARY_PATH", copy: map[string]string{cudaStub: "/usr/local/cuda/lib64/stubs/libcuda.so.1"},
			vars: map[string]string{"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs"}, state: StateNoDriver,
			summary: "the libcuda.so.1 the loader finds (/usr/local/cuda/lib64/stubs/libcuda.so.1, via LD_LIBRARY_PATH) is the CUDA toolkit's stub"},
		{name: "module loaded, no libraries", files: liveFiles(nil), state: StateNoUserSpace,
			summary: "the nvidia kernel module 550.54.14 is loaded, but its user-space libraries (libcuda.so.1, libnvidia-ml.so.1) are not where the loader looks", hint: "same version 550.54.14"},
		{name: "module loaded, only the stub", files: liveFiles(nil), copy: map[string]string{cudaStub: "/usr/local/cuda/lib64/stubs/libcuda.so.1"},
			vars: map[string]string{"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs"}, state: StateNoUserSpace, summary: "is the CUDA toolkit's stub"},
		{name: "nvidia-smi reports a mismatch", files: liveFiles(nil), smi: smiFakeExit("18"), methods: []string{methodSysfs, methodNvidiaSMI},
			state: StateMismatch, summary: "nvidia-smi reports a version mismatch between the kernel module (550.54.14) and the user-space libraries", hint: "reboot"},
		{name: "nvidia-smi cannot reach the driver", files: liveFiles(nil), smi: smiFakeExit("9"), methods: []string{methodSysfs, methodNvidiaSMI},
			state: StateNotAnswering, summary: "the nvidia kernel module 550.54.14 is loaded and /dev/nvidiactl exists, but the driver's libraries cannot communicate with it", hint: "dmesg"},
		{name: "wsl2 without an answer", files: map[string]string{"/dev/dxg": ""}, methods: []string{methodUserSpace}, state: StateWSL2,
			summary: "WSL2: the driver is the Windows host's, and no method could reach it"},
		{name: "wsl2 with a Linux driver's libcuda", files: map[string]string{"/dev/dxg": ""},
			copy:    map[string]string{cudaStub: "/usr/lib/wsl/lib/libcuda.so.1", buildStub(t, "libcuda.so.1", cudaStubC, "VERSION=12040"): "/opt/nvidia/libcuda.so.1"},
			vars:    map[string]string{"LD_LIBRARY_PATH": "/opt/nvidia"},
			methods: []string{methodUserSpace}, state: StateWSL2, summary: "libcuda.so.1 comes from /opt/nvidia/libcuda.so.1, not from /usr/lib/wsl/lib", hint: "remove the Linux driver's libcuda"},
		{name: "wsl2 with its own libraries", files: map[string]string{"/dev/dxg": ""}, copy: map[string]string{cudaStub: "/usr/lib/wsl/lib/libcuda.so.1"},
			methods: []string{methodUserSpace}, state: StateWSL2, summary: "WSL2: the driver is the Windows host's, and no method could reach it", hint: "update the driver on Windows;"},
		{name: "jetson", files: map[string]string{"/etc/nv_tegra_release": "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64\n"}, state: StateTegra, summary: "Jetson (L4T 35.4.1)", hint: "JetPack"},
		{name: "pinned", vars: map[string]string{envOverride: "580.65.06"}, state: StatePinned, summary: "driver 580.65.06, pinned by PATHFINDER_DRIVER_VERSION", hint: "unset PATHFINDER_DRIVER_VERSION"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filetree.New(t, tc.files)
			for from, to := range tc.copy {
				copyFile(t, from, filepath.Join(root, to))
			}
			methods := tc.methods
			if methods == nil {
				methods = fileMethods
			}
			r := Probe(context.Background(), Options{Root: root, rootIsLive: true, Methods: methods, LookupEnv: env(tc.vars),
				LookPath: func(string) (string, error) {
					if tc.smi == nil {
						return "", os.ErrNotExist
					}
					return tc.smi(t), nil
				}})
			if r.State != tc.state || !strings.Contains(r.Summary, tc.summary) || !strings.Contains(r.Hint, tc.hint) {
				t.Fatalf("state %q\nsummary %q\nhint %q\nwant %q, a summary with %q, a hint with %q", r.State, r.Summary, r.Hint, tc.state, tc.summary, tc.hint)
			}
			if tc.name == "wsl2 with its own libraries" && (r.UserSpace[0].Via != wslLibDir || r.UserSpace[0].Version != "" || r.UserSpace[0].Path != wslLibDir+"/libcuda.so.1") {
				t.Fatalf("libcuda %+v, want WSL's, without a version", r.UserSpace[0])
			}
		})
	}
}

// TestProbe_nvmlSignals: what nvmlInit_v2's failure says names the state.
func TestProbe_nvmlSignals(t *testing.T) {
	for _, tc := range []struct {
		ret   string
		state State
	}{{"18", StateMismatch}, {"9", StateNotAnswering}} {
		lib := buildStub(t, "libnvidia-ml.so.1", nvmlStubC, "INIT_RET="+tc.ret)
		r := Probe(context.Background(), Options{Root: filetree.New(t, liveFiles(nil)), rootIsLive: true, Methods: []string{methodSysfs, methodNVML},
			LookupEnv: env(map[string]string{envNVMLLibrary: lib})})
		if r.State != tc.state {
			t.Errorf("nvmlInit_v2 returning %s: state %s (%s), want %s", tc.ret, r.State, r.Summary, tc.state)
		}
	}
}

// TestProbe_nvmlLibraryMessage: a missing libnvidia-ml is named once, and WSL's folder is tried only
// on WSL2.
func TestProbe_nvmlLibraryMessage(t *testing.T) {
	if h, _, err := dlopenFirst([]string{"libnvidia-ml.so.1"}); err == nil {
		_ = h
		t.Skip("this machine's loader finds a libnvidia-ml.so.1")
	}
	root := filetree.New(t, liveFiles(nil))
	copyFile(t, buildStub(t, "libnvidia-ml.so.1", nvmlStubC), filepath.Join(root, wslLibDir, "libnvidia-ml.so.1"))
	r := Probe(context.Background(), Options{Root: root, rootIsLive: true, Methods: []string{methodNVML}, LookupEnv: env(nil)})
	if o := outcome(t, r, methodNVML); o.Outcome != OutcomeUnavailable || o.Detail != "cannot load libnvidia-ml.so.1: cannot open shared object file: No such file or directory" {
		t.Fatalf("%s %q", o.Outcome, o.Detail)
	}
}
