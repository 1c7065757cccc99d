package driver

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// NFDFileName is the file WriteNFDFile writes in node-feature-discovery's features.d folder.
const NFDFileName = "pathfinder"

// WriteNFD writes node-feature-discovery feature-file lines (name=value) with the label names NVIDIA's
// GPU Feature Discovery uses, so schedulers that select on GFD labels work unchanged. GFD describes the
// node by its first GPU; so does this. nvidia.com/cuda.runtime-version is the CUDA version the driver
// implements (GFD asks NVML for it); without NVML, libcuda or nvidia-smi it is the table's MaxCUDA.
// NFD only publishes labels outside its own namespace when its master allows nvidia.com
// (-extra-label-ns), as GFD deployments already do. Labels come only from a working driver (Working):
// otherwise it writes nothing, so a node whose driver broke stops advertising it.
func (r *Report) WriteNFD(w io.Writer) error {
	labels := map[string]string{}
	if !r.Working() {
		return nil
	}
	if r.DriverVersion != "" {
		major, minor, rev := splitVersion(r.DriverVersion)
		labels["nvidia.com/cuda.driver-version.full"] = r.DriverVersion
		labels["nvidia.com/cuda.driver-version.major"] = major
		labels["nvidia.com/cuda.driver-version.minor"] = minor
		labels["nvidia.com/cuda.driver-version.revision"] = rev
		labels["nvidia.com/cuda.driver.major"] = major // GFD's deprecated names, still read by older selectors
		labels["nvidia.com/cuda.driver.minor"] = minor
		labels["nvidia.com/cuda.driver.rev"] = rev
	}
	cuda := r.CUDADriverVersion
	if cuda == "" {
		cuda = r.MaxCUDA
	}
	if cuda != "" {
		major, minor, _ := splitVersion(cuda)
		labels["nvidia.com/cuda.runtime-version.full"] = cuda
		labels["nvidia.com/cuda.runtime-version.major"] = major
		labels["nvidia.com/cuda.runtime-version.minor"] = minor
		labels["nvidia.com/cuda.runtime.major"] = major
		labels["nvidia.com/cuda.runtime.minor"] = minor
	}
	// GFD counts what NVML enumerates; a GPU the driver's tools leave out (index -1: bound to vfio-pci,
	// excluded) is not schedulable here.
	var usable []GPU
	for _, g := range r.GPUs {
		if g.Index >= 0 {
			usable = append(usable, g)
		}
	}
	if len(usable) > 0 {
		g := usable[0]
		labels["nvidia.com/gpu.count"] = fmt.Sprint(len(usable))
		if p := labelValue(g.Name); p != "" {
			labels["nvidia.com/gpu.product"] = p
		}
		if g.ComputeCapability != "" {
			major, minor, _ := splitVersion(g.ComputeCapability)
			labels["nvidia.com/gpu.compute.major"] = major
			labels["nvidia.com/gpu.compute.minor"] = minor
			labels["nvidia.com/gpu.family"] = archFamily(major, minor)
		}
	}
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, k := range names {
		fmt.Fprintf(&b, "%s=%s\n", k, labels[k])
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteNFDFile writes the NFD feature file NFDFileName into dir (node-feature-discovery reads
// /etc/kubernetes/node-feature-discovery/features.d), empty when the driver does not work. It writes
// a temporary file in a hidden subfolder, which NFD does not read, and renames it into place, so NFD
// never sees half a file.
func WriteNFDFile(dir string, r *Report) error {
	var b bytes.Buffer
	if err := r.WriteNFD(&b); err != nil {
		return err
	}
	tmpDir, err := os.MkdirTemp(dir, ".pathfinder-tmp-")
	if err != nil {
		return fmt.Errorf("writing the feature file: %w", err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, NFDFileName)
	if err := writeSynced(tmp, b.Bytes()); err != nil {
		return fmt.Errorf("writing the feature file: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, NFDFileName)); err != nil {
		return fmt.Errorf("writing the feature file: %w", err)
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// splitVersion splits "550.144.03" into "550", "144", "03" (GFD keeps the leading zero; "580.142" has
// an empty revision, as GFD's labels show for such drivers).
func splitVersion(v string) (major, minor, rev string) {
	parts := strings.SplitN(v, ".", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	return parts[0], parts[1], parts[2]
}

// archFamily is GFD's getArchFamily: the architecture name for a compute capability.
func archFamily(major, minor string) string {
	switch major {
	case "1":
		return "tesla"
	case "2":
		return "fermi"
	case "3":
		return "kepler"
	case "5":
		return "maxwell"
	case "6":
		return "pascal"
	case "7":
		if minor < "5" {
			return "volta"
		}
		return "turing"
	case "8":
		if minor != "9" {
			return "ampere"
		}
		return "ada-lovelace"
	case "9":
		return "hopper"
	case "10", "12":
		return "blackwell"
	}
	return "undefined"
}

var labelUnsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9\-_. ]`) })

// labelValue is GFD's product sanitiser (drop what a label value cannot hold, spaces become dashes),
// cut to Kubernetes' 63 characters and trimmed to start and end with a letter or digit.
func labelValue(s string) string {
	s = strings.Join(strings.Fields(labelUnsafe().ReplaceAllString(s, "")), "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.TrimFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}
