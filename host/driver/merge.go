package driver

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
	"github.com/pathfinder-dev/pathfinder/internal/english"
)

// Authority per fact, highest first. The kernel interfaces know the kernel driver's version best (the
// libraries report theirs, which differs after an upgrade without a reboot); NVML and libcuda measure
// a compute capability that nvidia-smi only relays and the PCI-id table only infers.
var (
	driverRank   = []string{methodOverride, methodIoctl, methodSysfs, methodProcfs, methodNVML, methodNvidiaSMI}
	cudaRank     = []string{methodNVML, methodLibcuda, methodNvidiaSMI}
	l4tRank      = []string{methodProcfs, methodSetup}
	moduleRank   = []string{methodProcfs}
	ccRank       = []string{methodNVML, methodLibcuda, methodNvidiaSMI}
	nameRank     = append(slices.Clone(driverNameSources), methodPCI)
	uuidRank     = []string{methodNVML, methodNvidiaSMI, methodProcfs}
	deviceIDRank = []string{methodIoctl, methodPCI, methodNVML}
	indexRank    = []string{methodNVML, methodNvidiaSMI}
)

// driverNameSources are the methods that give a GPU's name as the driver has it ("NVIDIA H100 80GB
// HBM3"); the PCI scan gives the PCI-id table's pci.ids name ("GH100 [H100 SXM5 80GB]").
var driverNameSources = []string{methodNVML, methodLibcuda, methodNvidiaSMI, methodProcfs}

// claim is one method's value for one fact.
type claim struct{ source, value string }

// pick returns the claim of the highest-ranked source and whether any other claim disagrees with it.
func pick(claims []claim, rank []string) (claim, bool) {
	at := func(s string) int {
		if i := slices.Index(rank, s); i >= 0 {
			return i
		}
		return len(rank)
	}
	var best claim
	for _, c := range claims {
		if c.value != "" && (best.value == "" || at(c.source) < at(best.source)) {
			best = c
		}
	}
	for _, c := range claims {
		if c.value != "" && c.value != best.value {
			return best, true
		}
	}
	return best, false
}

func describeClaims(claims []claim) string {
	var parts []string
	for _, c := range claims {
		if c.value != "" {
			parts = append(parts, c.source+" "+c.value)
		}
	}
	return strings.Join(parts, ", ")
}

// merged is the probe's answer so far.
type merged struct {
	driver, driverSource string
	cuda, cudaSource     string
	l4t, kernelModule    string
	gpus                 []GPU
	notes                []string
	listed               map[string]bool // methods that listed at least one GPU
}

// complete reports whether the slow methods could add nothing: both versions known and the compute
// capability of every GPU the driver shows measured rather than inferred. A GPU that a method talking
// to the driver already left out (bound to vfio-pci, outside this container) stays out for the others.
func (m merged) complete() bool {
	if m.driver == "" || m.cuda == "" {
		return false
	}
	measured := 0
	for _, g := range m.gpus {
		switch {
		case g.ComputeCapability != "" && g.ComputeCapabilitySource != pciTableSource:
			measured++
		case !slices.ContainsFunc(driverViews, func(s string) bool { return m.listed[s] && !slices.Contains(g.Sources, s) }):
			return false
		}
	}
	return measured > 0
}

// driverViews are the methods that list the GPUs through the driver, as every CUDA program sees them.
var driverViews = []string{methodNVML, methodLibcuda, methodNvidiaSMI}

// gpuAcc gathers every method's claims about one GPU.
type gpuAcc struct {
	busID   string
	sources []string
	claims  map[string][]claim // "name", "uuid", "cc", "device", "index", "kdriver", "class"
}

func (a *gpuAcc) add(source string, g gpuObs) {
	if !slices.Contains(a.sources, source) {
		a.sources = append(a.sources, source)
	}
	add := func(k, v string) {
		if v != "" {
			a.claims[k] = append(a.claims[k], claim{source, v})
		}
	}
	add("name", g.name)
	add("uuid", g.uuid)
	add("cc", g.cc)
	add("device", g.deviceID)
	add("kdriver", g.kernelDriver)
	add("class", g.pciClass)
	if g.index >= 0 {
		add("index", strconv.Itoa(g.index))
	}
}

func (a *gpuAcc) has(k, v string) bool {
	return slices.ContainsFunc(a.claims[k], func(c claim) bool { return c.value == v })
}

// merge combines the observations so far.
func (p *prober) merge() merged {
	var m merged
	var driverClaims, cudaClaims, l4tClaims, moduleClaims []claim
	var accs []*gpuAcc
	byBus := map[string]*gpuAcc{}
	listed := map[string]bool{}
	m.listed = listed
	type loose struct {
		source string
		g      gpuObs
	}
	var noBus []loose
	for _, o := range p.obs {
		driverClaims = append(driverClaims, claim{o.source, o.driverVersion})
		cudaClaims = append(cudaClaims, claim{o.source, o.cudaVersion})
		l4tClaims = append(l4tClaims, claim{o.source, o.l4t})
		moduleClaims = append(moduleClaims, claim{o.source, o.kernelModule})
		for _, g := range o.gpus {
			listed[o.source] = true
			if g.busID == "" {
				noBus = append(noBus, loose{o.source, g})
				continue
			}
			a := byBus[g.busID]
			if a == nil {
				a = &gpuAcc{busID: g.busID, claims: map[string][]claim{}}
				byBus[g.busID] = a
				accs = append(accs, a)
			}
			a.add(o.source, g)
		}
	}
	// A GPU some method saw without a bus id is tied to one seen with it by its index (NVML and
	// nvidia-smi share one order) or by its name when that picks out one GPU; failing both it stays
	// unmatched rather than appear twice.
	for _, l := range noBus {
		var match *gpuAcc
		if l.g.index >= 0 && slices.Contains(indexRank, l.source) {
			for _, a := range accs {
				if a.has("index", strconv.Itoa(l.g.index)) && !slices.Contains(a.sources, l.source) {
					match = a
					break
				}
			}
		}
		if match == nil && l.g.name != "" {
			var same []*gpuAcc
			for _, a := range accs {
				if a.has("name", l.g.name) && !slices.Contains(a.sources, l.source) {
					same = append(same, a)
				}
			}
			if len(same) >= 1 && (len(same) == 1 || allSameModel(accs, l.g.name)) {
				match = same[0] // identical GPUs: any one carries the same name and capability
			}
		}
		if match == nil {
			if len(byBus) > 0 {
				m.notes = append(m.notes, fmt.Sprintf("%s lists a GPU without a PCI bus id (%s) that matches none of the others", l.source, orDash(l.g.name)))
				continue
			}
			match = &gpuAcc{busID: "", claims: map[string][]claim{}}
			accs = append(accs, match)
		}
		match.add(l.source, l.g)
	}

	var dis bool
	var c claim
	if c, dis = pick(driverClaims, driverRank); c.value != "" {
		m.driver, m.driverSource = c.value, c.source
		if dis {
			m.notes = append(m.notes, fmt.Sprintf("methods disagree on the driver version (%s); using %s's", describeClaims(driverClaims), c.source))
		}
	}
	if c, dis = pick(cudaClaims, cudaRank); c.value != "" {
		m.cuda, m.cudaSource = c.value, c.source
		if dis {
			m.notes = append(m.notes, fmt.Sprintf("methods disagree on the CUDA driver version (%s); using %s's", describeClaims(cudaClaims), c.source))
		}
	}
	if c, dis = pick(l4tClaims, l4tRank); c.value != "" {
		m.l4t = c.value
		if dis {
			m.notes = append(m.notes, fmt.Sprintf("methods disagree on the L4T release (%s); using %s's", describeClaims(l4tClaims), c.source))
		}
	}
	km, _ := pick(moduleClaims, moduleRank)
	m.kernelModule = km.value

	for _, a := range accs {
		m.gpus = append(m.gpus, a.gpu(&m.notes))
	}
	assignIndexes(m.gpus)
	m.notes = append(m.notes, unlistedNotes(m.gpus, listed)...)
	return m
}

// gpu resolves one GPU's facts, noting disagreements.
func (a *gpuAcc) gpu(notes *[]string) GPU {
	g := GPU{Index: -1, PCIBusID: a.busID, Sources: slices.Clone(a.sources)}
	label := a.busID
	if label == "" {
		label = "without a bus id"
	}
	name, _ := pick(a.claims["name"], nameRank)
	g.Name = name.value
	uuid, _ := pick(a.claims["uuid"], uuidRank)
	g.UUID = uuid.value
	dev, _ := pick(a.claims["device"], deviceIDRank)
	g.DeviceID = dev.value
	kd, _ := pick(a.claims["kdriver"], []string{methodPCI})
	g.KernelDriver = kd.value
	class, _ := pick(a.claims["class"], []string{methodPCI})
	g.PCIClass = class.value
	if idx, _ := pick(a.claims["index"], indexRank); idx.value != "" {
		g.Index, _ = strconv.Atoi(idx.value)
	}
	cc, dis := pick(a.claims["cc"], ccRank)
	if dis {
		*notes = append(*notes, fmt.Sprintf("GPU %s: methods disagree on the compute capability (%s); using %s's", label, describeClaims(a.claims["cc"]), cc.source))
	}
	g.ComputeCapability, g.ComputeCapabilitySource = cc.value, cc.source
	if id, err := strconv.ParseUint(strings.TrimPrefix(g.DeviceID, "0x"), 16, 16); err == nil && g.DeviceID != "" {
		if row, found, _ := tables.LookupPCIDevice(uint16(id)); found && row.ComputeCapability != "" {
			switch {
			case g.ComputeCapability == "":
				g.ComputeCapability, g.ComputeCapabilitySource = row.ComputeCapability, pciTableSource
			case g.ComputeCapability != row.ComputeCapability:
				*notes = append(*notes, fmt.Sprintf("GPU %s: the PCI-id table infers compute capability %s for device %s (%s), %s measured %s",
					label, row.ComputeCapability, g.DeviceID, row.Chip, cc.source, g.ComputeCapability))
			}
		}
	}
	return g
}

// unlistedNotes says which GPUs the driver's own tools leave out though other methods see them: bound
// to another driver (vfio-pci, nouveau), excluded, or outside this container's share of the machine.
func unlistedNotes(gpus []GPU, listed map[string]bool) []string {
	var notes []string
	for _, s := range []string{methodNVML, methodNvidiaSMI} {
		if !listed[s] {
			continue
		}
		var missing []string
		for _, g := range gpus {
			if g.PCIBusID == "" || slices.Contains(g.Sources, s) {
				continue
			}
			d := g.PCIBusID + " (" + strings.Join(g.Sources, ", ")
			if g.KernelDriver != "" && g.KernelDriver != "nvidia" {
				d += "; bound to " + g.KernelDriver
			}
			missing = append(missing, d+")")
		}
		if len(missing) > 0 {
			notes = append(notes, fmt.Sprintf("%s does not list %s that other methods see: %s", s, english.Plural(len(missing), "GPU"), strings.Join(missing, ", ")))
		}
	}
	return notes
}

func allSameModel(accs []*gpuAcc, name string) bool {
	for _, a := range accs {
		if !a.has("name", name) {
			return false
		}
	}
	return true
}

// assignIndexes numbers GPUs in PCI bus order when no driver tool gave indexes (the order NVML would
// use), and sorts them by index.
func assignIndexes(gpus []GPU) {
	sort.SliceStable(gpus, func(i, j int) bool { return gpus[i].PCIBusID < gpus[j].PCIBusID })
	if !slices.ContainsFunc(gpus, func(g GPU) bool { return g.Index >= 0 }) {
		for i := range gpus {
			gpus[i].Index = i
		}
		return
	}
	sort.SliceStable(gpus, func(i, j int) bool {
		a, b := gpus[i].Index, gpus[j].Index
		if (a < 0) != (b < 0) {
			return a >= 0
		}
		return a < b
	})
}
