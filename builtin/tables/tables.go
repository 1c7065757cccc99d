// Package tables holds the data tables pathfinder ships inside its binary: which CUDA toolkit each
// NVIDIA driver supports, and which compute capability each NVIDIA PCI device id has. The data lives in
// TSV files next to this file, each with a header naming its sources; they are parsed once, at first use.
package tables

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Embedded file names, also used in error messages so a bad row names its file and line.
const (
	cudaFile = "cuda_toolkit_driver_versions.tsv"
	pciFile  = "pci_device_compute_capability.tsv"
)

//go:embed cuda_toolkit_driver_versions.tsv
var cudaTSV []byte

//go:embed pci_device_compute_capability.tsv
var pciTSV []byte

// CUDARelease is one row of NVIDIA's "CUDA Toolkit and Corresponding Driver Versions" table.
type CUDARelease struct {
	Toolkit          string // major.minor, e.g. "12.4"
	Release          string // as NVIDIA names it, e.g. "CUDA 12.4 Update 1"
	MinLinuxDriver   string // e.g. "550.54.15"
	MinWindowsDriver string // e.g. "551.78"; "" where NVIDIA names none
}

// PCIDevice is what the shipped table infers about one NVIDIA PCI device id.
type PCIDevice struct {
	DeviceID          uint16
	Chip              string // e.g. "GH100"
	ComputeCapability string // e.g. "9.0"; "" when the chip is known but its capability is not
	Confidence        string // "high", "medium" or "low"
	Name              string // the pci.ids name, e.g. "GH100 [H100 SXM5 80GB]"
}

var (
	cudaOnce     sync.Once
	cudaReleases []CUDARelease
	cudaErr      error

	pciOnce    sync.Once
	pciDevices map[uint16]PCIDevice
	pciErr     error
)

// CUDAReleases returns the driver table, newest release first. The slice is a copy.
func CUDAReleases() ([]CUDARelease, error) {
	cudaOnce.Do(func() { cudaReleases, cudaErr = parseCUDAReleases(cudaTSV) })
	if cudaErr != nil {
		return nil, cudaErr
	}
	return append([]CUDARelease(nil), cudaReleases...), nil
}

// LookupPCIDevice returns the table's row for an NVIDIA PCI device id. Every answer is an inference
// from the device id, never a measurement; callers must say so when they report it.
func LookupPCIDevice(deviceID uint16) (PCIDevice, bool, error) {
	pciOnce.Do(func() { pciDevices, pciErr = parsePCIDevices(pciTSV) })
	if pciErr != nil {
		return PCIDevice{}, false, pciErr
	}
	d, ok := pciDevices[deviceID]
	return d, ok, nil
}

// rows yields the data rows of a TSV file: comment lines (#) and blank lines are skipped, the first
// remaining line must be the expected header. fn gets the 1-based line number and the fields.
func rows(name string, data []byte, header []string, fn func(line int, f []string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line, sawHeader := 0, false
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if !sawHeader {
			if strings.Join(f, "\t") != strings.Join(header, "\t") {
				return fmt.Errorf("%s:%d: header is %q, want %q", name, line, text, strings.Join(header, "\t"))
			}
			sawHeader = true
			continue
		}
		if len(f) != len(header) {
			return fmt.Errorf("%s:%d: %d fields, want %d", name, line, len(f), len(header))
		}
		if err := fn(line, f); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !sawHeader {
		return fmt.Errorf("%s: no header line", name)
	}
	return nil
}

func parseCUDAReleases(data []byte) ([]CUDARelease, error) {
	var out []CUDARelease
	err := rows(cudaFile, data, []string{"toolkit", "release", "linux_min_driver", "windows_min_driver"}, func(_ int, f []string) error {
		r := CUDARelease{Toolkit: f[0], Release: f[1], MinLinuxDriver: f[2], MinWindowsDriver: f[3]}
		if !isDotted(r.Toolkit, 2, 2) {
			return fmt.Errorf("toolkit %q is not major.minor", r.Toolkit)
		}
		if r.Release == "" {
			return fmt.Errorf("empty release name")
		}
		if !isDotted(r.MinLinuxDriver, 2, 3) {
			return fmt.Errorf("linux driver %q is not a driver version", r.MinLinuxDriver)
		}
		switch {
		case r.MinWindowsDriver == "N/A":
			r.MinWindowsDriver = ""
		case !isDotted(r.MinWindowsDriver, 2, 3):
			return fmt.Errorf("windows driver %q is neither a driver version nor N/A", r.MinWindowsDriver)
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rows", cudaFile)
	}
	return out, nil
}

func parsePCIDevices(data []byte) (map[uint16]PCIDevice, error) {
	out := make(map[uint16]PCIDevice)
	header := []string{"device_id", "pciids_chip_token", "chip", "compute_capability", "confidence", "pciids_name"}
	err := rows(pciFile, data, header, func(_ int, f []string) error {
		if len(f[0]) != 4 || strings.ToLower(f[0]) != f[0] {
			return fmt.Errorf("device id %q is not 4 lower-case hex digits", f[0])
		}
		id, err := strconv.ParseUint(f[0], 16, 16)
		if err != nil {
			return fmt.Errorf("device id %q is not hex", f[0])
		}
		d := PCIDevice{DeviceID: uint16(id), Chip: f[2], ComputeCapability: f[3], Confidence: f[4], Name: f[5]}
		if d.Chip == "" {
			return fmt.Errorf("device %s has no chip", f[0])
		}
		switch {
		case d.ComputeCapability == "?":
			d.ComputeCapability = ""
		case !isDotted(d.ComputeCapability, 2, 2):
			return fmt.Errorf("compute capability %q is neither major.minor nor ?", d.ComputeCapability)
		}
		switch d.Confidence {
		case "high", "medium", "low":
		default:
			return fmt.Errorf("confidence %q is not high, medium or low", d.Confidence)
		}
		if _, dup := out[d.DeviceID]; dup {
			return fmt.Errorf("device id %s appears twice", f[0])
		}
		out[d.DeviceID] = d
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rows", pciFile)
	}
	return out, nil
}

// isDotted reports whether s is min..max dot-separated runs of 1-4 decimal digits.
func isDotted(s string, min, max int) bool {
	parts := strings.Split(s, ".")
	if len(parts) < min || len(parts) > max {
		return false
	}
	for _, p := range parts {
		if len(p) == 0 || len(p) > 4 {
			return false
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
	}
	return true
}

// CompareVersions compares dotted decimal versions numerically component by component ("570.124.06" >
// "570.26"); a missing component counts as 0.
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
