package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
	"github.com/pathfinder-dev/pathfinder/internal/english"
)

// PCI class codes (class file: 0xCCSSPP) of the functions that are GPUs: VGA-compatible (0x0300) and
// 3D (0x0302) controllers. NVIDIA's audio, USB and bridge functions share the vendor id and are not.
const (
	pciClassVGA = 0x0300
	pciClass3D  = 0x0302
)

// probePCI lists NVIDIA GPUs from /sys/bus/pci/devices. It needs no driver at all, so it also finds a
// GPU that is bound to vfio-pci or nouveau, or whose driver failed to load.
func probePCI(p *prober) methodResult {
	dir := p.path("/sys/bus/pci/devices")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return unavailable("no /sys/bus/pci/devices")
	}
	if err != nil {
		return failed("%v", err)
	}
	obs := &observation{}
	for _, e := range entries {
		g, isGPU, err := readPCIDevice(filepath.Join(dir, e.Name()))
		if err != nil || !isGPU {
			continue // a device we cannot read is not worth failing the whole scan for
		}
		if g.busID = canonicalBusID(e.Name()); g.busID == "" {
			continue
		}
		obs.gpus = append(obs.gpus, g)
	}
	sort.Slice(obs.gpus, func(i, j int) bool { return obs.gpus[i].busID < obs.gpus[j].busID })
	if len(obs.gpus) == 0 {
		return ok(fmt.Sprintf("no NVIDIA GPU among %d PCI devices", len(entries)), obs)
	}
	var ds []string
	for _, g := range obs.gpus {
		d := g.busID + " " + g.deviceID
		if g.kernelDriver != "" {
			d += " (" + g.kernelDriver + ")"
		}
		ds = append(ds, d)
	}
	return ok(fmt.Sprintf("%s: %s", english.Plural(len(obs.gpus), "NVIDIA GPU"), strings.Join(ds, ", ")), obs)
}

// readPCIDevice reads one /sys/bus/pci/devices entry and reports whether it is an NVIDIA GPU.
func readPCIDevice(dir string) (gpuObs, bool, error) {
	vendor, err := readHexFile(filepath.Join(dir, "vendor"))
	if err != nil || uint16(vendor) != nvidiaVendorID {
		return gpuObs{}, false, err
	}
	class, err := readHexFile(filepath.Join(dir, "class"))
	if err != nil {
		return gpuObs{}, false, err
	}
	if c := class >> 8; c != pciClassVGA && c != pciClass3D {
		return gpuObs{}, false, nil
	}
	device, err := readHexFile(filepath.Join(dir, "device"))
	if err != nil {
		return gpuObs{}, false, err
	}
	g := gpuObs{index: -1, deviceID: fmt.Sprintf("0x%04x", device), pciClass: fmt.Sprintf("0x%06x", class)}
	if d, found, _ := tables.LookupPCIDevice(uint16(device)); found {
		g.name = d.Name
	}
	if link, err := os.Readlink(filepath.Join(dir, "driver")); err == nil {
		g.kernelDriver = filepath.Base(link)
	}
	return g, true, nil
}

// readHexFile reads a sysfs attribute such as "0x10de\n".
func readHexFile(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(data))
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 16, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a hex number", path, s)
	}
	return v, nil
}

// canonicalBusID writes a PCI address the way sysfs names it ("0000:65:00.0"), whatever form it came
// in: NVML and nvidia-smi print "00000000:65:00.0" in upper case, libcuda "0000:65:00.0", and an address
// without a domain means domain 0. It returns "" for anything that is not a PCI address.
func canonicalBusID(s string) string {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) == 2 {
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return ""
	}
	dev, fn, hasFn := strings.Cut(parts[2], ".")
	if !hasFn {
		fn = "0"
	}
	var v [4]uint64
	for i, f := range []struct {
		s    string
		bits int
	}{{parts[0], 32}, {parts[1], 8}, {dev, 5}, {fn, 3}} {
		if f.s == "" || len(f.s) > 8 {
			return ""
		}
		n, err := strconv.ParseUint(f.s, 16, f.bits)
		if err != nil {
			return ""
		}
		v[i] = n
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", v[0], v[1], v[2], v[3])
}
