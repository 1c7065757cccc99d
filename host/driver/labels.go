package driver

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Label names. GPU Feature Discovery's, with its value formats, are NVIDIA/k8s-device-plugin
// v0.20.0's: internal/lm/nvml.go (cuda.*, mig.capable, gpu.mode), internal/lm/resource.go
// (gpu.product, gpu.count, gpu.memory, gpu.family, gpu.compute.*) and internal/lm/machine-type.go
// (gpu.machine). nvidia.com/gpu.present is the GPU Operator's (NVIDIA/gpu-operator v26.7.0,
// controllers/state_manager.go). pathfinder's own live in a sub-namespace of NFD's, which nfd-master
// accepts whatever its configuration (node-feature-discovery v0.19.0, pkg/apis/nfd/validate/validate.go).
const (
	gfd          = "nvidia.com/"
	pathfinderNS = "pathfinder.feature.node.kubernetes.io/"
	labelState   = pathfinderNS + "driver.state"
	labelModule  = pathfinderNS + "driver.kernel-module"
)

// NodeLabels are a node's labels, made from the facts of a Report, and the labels left out.
type NodeLabels struct {
	Labels  map[string]string
	Omitted []OmittedLabel
}

// OmittedLabel is a label NodeLabels did not write, and why: a value NFD would refuse, a GPU name
// that is not the driver's, or a second GPU model, which GFD's labels (they describe one) leave out.
type OmittedLabel struct {
	Name, Value, Reason string
}

func (o OmittedLabel) String() string { return fmt.Sprintf("%s=%q: %s", o.Name, o.Value, o.Reason) }

// NodeUsable reports whether the node's driver can run CUDA programs as far as the node's own facts
// show: Working, or the kernel module loaded with only this process lacking the device nodes or the
// user-space libraries, as a labeller's container does. NodeLabels describes such a node in full.
func (r *Report) NodeUsable() bool {
	return r.Working() || r.State == StateNoDevices || r.State == StateNoUserSpace
}

// NodeLabels returns the node's labels in GPU Feature Discovery's names and formats, from the kernel
// module's version, the GPUs on the PCI bus and what the driver lists, the PCI-id table and the DMI
// product name, so the labeller needs no NVML. A node without an NVIDIA kernel driver gets none;
// every other gets pathfinder's driver.state label (the State), and a node whose driver is broken
// (NodeUsable false) only that. Where the GPUs are of several models, GFD's labels describe the first
// by PCI bus id and pathfinder's gpu.<product>.count labels count each.
func (r *Report) NodeLabels() NodeLabels {
	l := NodeLabels{Labels: map[string]string{}}
	if !r.Working() && (r.Setup == SetupNoDriver || r.State == "" || r.State == StateNoDriver || r.State == StateNotLoaded) {
		return l
	}
	l.set(labelState, string(r.State))
	if !r.NodeUsable() {
		return l
	}
	if r.KernelModule != "" {
		l.set(labelModule, r.KernelModule)
	}
	if v := r.DriverVersion; v != "" {
		major, minor, rev := splitVersion(v)
		l.set(gfd+"cuda.driver-version.full", v)
		l.set(gfd+"cuda.driver-version.major", major)
		l.set(gfd+"cuda.driver-version.minor", minor)
		l.set(gfd+"cuda.driver-version.revision", rev)
		l.set(gfd+"cuda.driver.major", major) // GFD's deprecated names, which it still writes
		l.set(gfd+"cuda.driver.minor", minor)
		l.set(gfd+"cuda.driver.rev", rev)
	}
	// GFD asks NVML for the CUDA version the driver implements; without NVML, libcuda or nvidia-smi
	// it is the newest CUDA NVIDIA's table lists for the driver, the same number for NVIDIA's drivers.
	cuda := r.CUDADriverVersion
	if cuda == "" {
		cuda = r.MaxCUDA
	}
	if cuda != "" {
		major, minor, _ := splitVersion(cuda)
		l.set(gfd+"cuda.runtime-version.full", major+"."+minor)
		l.set(gfd+"cuda.runtime-version.major", major)
		l.set(gfd+"cuda.runtime-version.minor", minor)
		l.set(gfd+"cuda.runtime.major", major)
		l.set(gfd+"cuda.runtime.minor", minor)
	}
	l.setGPUs(schedulable(r.GPUs))
	if r.DMIProductName != "" {
		l.set(gfd+"gpu.machine", sanitise(r.DMIProductName))
	}
	return l
}

// schedulable are the GPUs a pod can be given, by PCI bus id: those the driver lists (NVML and
// nvidia-smi leave out one bound to vfio-pci), but none the PCI scan finds bound to another driver,
// or to none where nothing else saw it.
func schedulable(gpus []GPU) []GPU {
	var out []GPU
	for _, g := range gpus {
		otherDriver := g.KernelDriver != "" && g.KernelDriver != "nvidia"
		unbound := g.KernelDriver == "" && slices.Equal(g.Sources, []string{methodPCI})
		if g.Index >= 0 && !otherDriver && !unbound {
			out = append(out, g)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].PCIBusID, out[j].PCIBusID
		return a != "" && (b == "" || a < b) // a GPU without a bus id (WSL2) after those with one
	})
	return out
}

// gpuModel is the GPUs of one model.
type gpuModel struct {
	product string // GFD's product value; "" where only the PCI-id table names the GPU
	first   GPU
	count   int
}

// models groups the GPUs by model, in the order of each model's first GPU; GPUs the driver does not
// name are told apart by their PCI device id.
func models(gpus []GPU) []gpuModel {
	var ms []gpuModel
	for _, g := range gpus {
		product := ""
		if driverNamed(g) {
			product = sanitise(g.Name)
		}
		i := slices.IndexFunc(ms, func(m gpuModel) bool {
			return m.product == product && (product != "" || m.first.DeviceID == g.DeviceID)
		})
		if i < 0 {
			ms = append(ms, gpuModel{product: product, first: g})
			i = len(ms) - 1
		}
		ms[i].count++
	}
	return ms
}

// driverNamed reports whether a GPU's name is the driver's (GFD's product is NVML's name, which
// /proc/driver/nvidia/gpus also shows), not the PCI-id table's pci.ids name ("GH100 [H100 SXM5 80GB]").
func driverNamed(g GPU) bool {
	return g.Name != "" && slices.ContainsFunc(g.Sources, func(s string) bool { return slices.Contains(driverNameSources, s) })
}

// setGPUs writes the GPU labels: GFD's of the first model by PCI bus id, and each model's count.
func (l *NodeLabels) setGPUs(gpus []GPU) {
	ms := models(gpus)
	if len(ms) == 0 {
		return
	}
	l.set(gfd+"gpu.present", "true")
	first := ms[0]
	l.set(gfd+"gpu.count", strconv.Itoa(first.count)) // GFD's count is of the product it names
	if first.product != "" {
		l.set(gfd+"gpu.product", first.product)
	} else if first.first.Name != "" {
		l.omit(gfd+"gpu.product", first.first.Name, "only the PCI-id table names the GPU at "+first.first.PCIBusID+
			" (/proc/driver/nvidia/gpus is not readable here): GFD's value is the driver's name")
	}
	if major, minor, ok := computeCapability(first.first.ComputeCapability); ok {
		l.set(gfd+"gpu.compute.major", strconv.Itoa(major))
		l.set(gfd+"gpu.compute.minor", strconv.Itoa(minor))
		l.set(gfd+"gpu.family", archFamily(major, minor))
	}
	if mode := gpuMode(gpus); mode != "" {
		l.set(gfd+"gpu.mode", mode)
	}
	for i, m := range ms {
		if m.product != "" {
			l.set(pathfinderNS+"gpu."+m.product+".count", strconv.Itoa(m.count))
		}
		if i > 0 {
			l.omit(gfd+"gpu.product", m.product, fmt.Sprintf("a second GPU model, from %s: GFD's labels describe one, the first by PCI bus id (%s, from %s); %sgpu.<product>.count counts each",
				m.first.PCIBusID, orDash(first.product), first.first.PCIBusID, pathfinderNS))
		}
	}
}

func computeCapability(cc string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(cc, ".")
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	// GFD writes no architecture labels for a capability of major 0 (unknown).
	return major, minor, found && err1 == nil && err2 == nil && major > 0
}

// gpuMode is GFD's getModeForClasses (internal/lm/nvml.go): "graphics" when every GPU is a VGA
// controller (PCI class 0x030000), "compute" when every one is a 3D controller (0x030200), else
// "unknown". "" when no GPU's class is known (WSL2 shows none), where GFD would ask NVML.
func gpuMode(gpus []GPU) string {
	var classes []string
	for _, g := range gpus {
		if g.PCIClass == "" {
			return ""
		}
		if !slices.Contains(classes, g.PCIClass) {
			classes = append(classes, g.PCIClass)
		}
	}
	switch {
	case len(classes) != 1:
		return "unknown"
	case classes[0] == "0x030000":
		return "graphics"
	case classes[0] == "0x030200":
		return "compute"
	}
	return "unknown"
}

// set writes a label, or records why NFD would refuse it.
func (l *NodeLabels) set(name, value string) {
	if why := labelProblem(name, value); why != "" {
		l.omit(name, value, why)
		return
	}
	l.Labels[name] = value
}

func (l *NodeLabels) omit(name, value, why string) {
	l.Omitted = append(l.Omitted, OmittedLabel{Name: name, Value: value, Reason: why})
}

// splitVersion splits "550.144.03" into "550", "144", "03" as GFD does (it keeps the leading zero;
// "580.142" has an empty revision).
func splitVersion(v string) (major, minor, rev string) {
	parts := strings.SplitN(v, ".", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	return parts[0], parts[1], parts[2]
}

// archFamily is GFD's getArchFamily (internal/lm/resource.go): the architecture of a compute capability.
func archFamily(major, minor int) string {
	switch major {
	case 1:
		return "tesla"
	case 2:
		return "fermi"
	case 3:
		return "kepler"
	case 5:
		return "maxwell"
	case 6:
		return "pascal"
	case 7:
		if minor < 5 {
			return "volta"
		}
		return "turing"
	case 8:
		if minor < 9 {
			return "ampere"
		}
		return "ada-lovelace"
	case 9:
		return "hopper"
	case 10, 12:
		return "blackwell"
	case 13:
		return "rubin"
	}
	return "undefined"
}

var productUnsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("[^A-Za-z0-9-_. ]") })

// sanitise is GFD's sanitise (internal/lm/resource.go), for gpu.product and gpu.machine: characters
// outside [A-Za-z0-9-_. ] dropped, runs of spaces one dash. What NFD would still refuse (too long, a
// dash at an end) is left to set, which says so.
func sanitise(s string) string {
	return strings.Join(strings.Fields(productUnsafe().ReplaceAllString(s, "")), "-")
}

// The label rules nfd-master applies (node-feature-discovery v0.19.0, pkg/apis/nfd/validate/validate.go,
// Label) are k8s.io/apimachinery's IsQualifiedName and IsValidLabelValue (v0.37.2,
// pkg/api/validate/content/kube.go): a name of at most 63 characters after an optional DNS-subdomain
// prefix and '/', and a value of at most 63, of letters, digits, '-', '_' and '.', beginning and
// ending with a letter or digit (an empty value is valid).
const labelMaxLength, labelPrefixMaxLength = 63, 253

var (
	labelWord   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`) })
	labelPrefix = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	})
)

// labelProblem says why NFD would refuse a label, or "" when it would take it.
func labelProblem(name, value string) string {
	prefix, base, found := strings.Cut(name, "/")
	switch {
	case !found || prefix == "" || len(prefix) > labelPrefixMaxLength || !labelPrefix().MatchString(prefix):
		return "the name's prefix is not a DNS subdomain of at most 253 characters"
	case len(base) > labelMaxLength:
		return fmt.Sprintf("the name after the prefix is %d characters; NFD takes at most %d", len(base), labelMaxLength)
	case !labelWord().MatchString(base):
		return "the name after the prefix must be letters, digits, '-', '_' and '.', beginning and ending with a letter or digit"
	case len(value) > labelMaxLength:
		return fmt.Sprintf("the value is %d characters; NFD takes at most %d", len(value), labelMaxLength)
	case value != "" && !labelWord().MatchString(value):
		return "a value must be letters, digits, '-', '_' and '.', beginning and ending with a letter or digit"
	}
	return ""
}
