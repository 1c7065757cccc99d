//go:build !pathfinder_static

package driver

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// nodeGPU is one GPU of a captured node.
type nodeGPU struct {
	bus    string
	device uint32
	model  string // as the driver names it in /proc/driver/nvidia/gpus
}

// capturedNodes are the nodes whose labels testdata/labels pins: each a fake root of the real /proc
// and /sys captures in testdata, PCI entries of real device ids and classes, the driver's
// /proc/driver/nvidia/gpus files, a DMI product name, and where the node has them, device nodes and
// the user-space libraries (gcc-built, named as the driver's packages name them).
func capturedNodes(t *testing.T) map[string]string {
	withGPUs := func(files map[string]string, gpus ...nodeGPU) map[string]string {
		for i, g := range gpus {
			class := uint32(0x030200)
			if strings.Contains(g.model, "RTX") {
				class = 0x030000 // GeForce and RTX workstation boards are VGA controllers
			}
			pciDevice(files, g.bus, 0x10de, class, g.device, "nvidia")
			minor := strconv.Itoa(i)
			files["/proc/driver/nvidia/gpus/"+g.bus+"/information"] = strings.Replace(
				gpuInformation(g.model, "GPU-00000000-0000-0000-0000-00000000000"+minor, g.bus), "Device Minor: \t 0", "Device Minor: \t "+minor, 1)
			files["/dev/nvidia"+minor] = ""
		}
		return files
	}
	module := func(proc, sys string, ctl bool) map[string]string {
		f := map[string]string{"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/"+proc)}
		if sys != "" {
			f["/sys/module/nvidia/version"] = sample(t, "sys_module_nvidia_version/"+sys)
		}
		if ctl {
			f["/dev/nvidiactl"] = ""
		}
		return f
	}
	withoutDev := func(files map[string]string) map[string]string {
		for k := range files {
			if strings.HasPrefix(k, "/dev/") {
				delete(files, k)
			}
		}
		return files
	}
	userSpace := func(root, version string) string {
		for soname, src := range map[string]string{"libcuda.so.1": cudaStubC, "libnvidia-ml.so.1": nvmlStubC} {
			file := strings.TrimSuffix(soname, "1") + version
			copyFile(t, buildStub(t, soname, src), filepath.Join(root, "usr/lib64", file))
			filetree.Symlink(t, file, filepath.Join(root, "usr/lib64", soname))
		}
		return root
	}
	h100 := func() map[string]string {
		f := withGPUs(module("open_x86_64_550.144.03.txt", "550.144.03.txt", true),
			nodeGPU{"0000:18:00.0", 0x2330, "NVIDIA H100 80GB HBM3"}, nodeGPU{"0000:2a:00.0", 0x2330, "NVIDIA H100 80GB HBM3"})
		f["/sys/class/dmi/id/product_name"] = "PowerEdge XE9680\n"
		return f
	}
	twoModels := withoutDev(withGPUs(module("open_x86_64_570.195.03.txt", "", false),
		nodeGPU{"0000:65:00.0", 0x26b5, "NVIDIA L40"}, nodeGPU{"0000:17:00.0", 0x2230, "NVIDIA RTX A6000"}, nodeGPU{"0000:ca:00.0", 0x26b5, "NVIDIA L40"}))
	twoModels["/sys/class/dmi/id/product_name"] = "ProLiant DL380 Gen10\n"
	rtx := withGPUs(module("closed_x86_64_515.76.txt", "", true), nodeGPU{"0000:01:00.0", 0x2204, "NVIDIA GeForce RTX 3090"})
	rtx["/sys/class/dmi/id/product_name"] = "To Be Filled By O.E.M.\n" // what many boards' firmware says
	rtx["/dev/nvidia-uvm"], rtx["/dev/nvidia-uvm-tools"], rtx["/sys/module/nvidia_uvm"] = "", "", "dir"
	sysOnly := map[string]string{"/sys/module/nvidia/version": sample(t, "sys_module_nvidia_version/550.54.14.txt"), "/sys/class/dmi/id/product_name": "p5.48xlarge\n"}
	pciDevice(sysOnly, "0000:53:00.0", 0x10de, 0x030200, 0x2330, "nvidia")
	noModule := map[string]string{}
	pciDevice(noModule, "0000:18:00.0", 0x10de, 0x030200, 0x2330, "")

	wsl := filetree.New(t, map[string]string{"/dev/dxg": ""})
	copyFile(t, buildStub(t, "libcuda.so.1", cudaStubC), filepath.Join(wsl, wslLibDir, "libcuda.so.1"))
	return map[string]string{
		// The labeller's container on an H100 node: /dev mounted, no user space.
		"h100-open-module-no-user-space": filetree.New(t, h100()),
		// The same node where the driver's libraries are of another version: a broken driver.
		"h100-version-mismatch": userSpace(filetree.New(t, h100()), "535.261.03"),
		// A workstation with the proprietary module and its libraries: a working driver.
		"rtx3090-proprietary-working": userSpace(filetree.New(t, rtx), "515.76"),
		// Two models, VGA and 3D, in a container without device access.
		"two-models-container": filetree.New(t, twoModels),
		// Only /sys: no /proc/driver/nvidia, so no driver's name for the GPU.
		"h100-sys-only": filetree.New(t, sysOnly),
		"no-module":     filetree.New(t, noModule),
		"wsl2":          wsl,
	}
}

// TestNodeLabels_capturedNodes pins each captured node's feature file and the labels left out with
// why; refresh with go test ./host/driver -run TestNodeLabels_capturedNodes -update.
func TestNodeLabels_capturedNodes(t *testing.T) {
	nodes := capturedNodes(t)
	for name, root := range nodes {
		t.Run(name, func(t *testing.T) {
			l := probe(t, root, fileMethods, nil).NodeLabels()
			data, err := l.FeatureFile(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			got := string(data)
			for _, o := range l.Omitted {
				got += "# omitted: " + o.String() + "\n"
			}
			path := filepath.Join("testdata", "labels", name+".txt")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				os.WriteFile(path, []byte(got), 0o644)
			}
			want, err := os.ReadFile(path)
			if err != nil || got != string(want) {
				t.Fatalf("labels differ from %s (%v; -update rewrites it):\n%s", path, err, got)
			}
		})
	}
	goldens, _ := filepath.Glob(filepath.Join("testdata", "labels", "*.txt"))
	for _, g := range goldens {
		if _, ok := nodes[strings.TrimSuffix(filepath.Base(g), ".txt")]; !ok {
			t.Errorf("%s belongs to no captured node", g)
		}
	}
	if len(goldens) != len(nodes) || !slices.Contains(goldens, filepath.Join("testdata", "labels", "wsl2.txt")) {
		t.Errorf("goldens %v", goldens)
	}
}
