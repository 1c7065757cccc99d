package main

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pathfinder-dev/pathfinder/host/driver"
)

// The files gpu-check.sh saves in its output directory.
const (
	fileDriverAll    = "driver.json"        // driver --json --methods <every method>
	fileDriverStatic = "driver-static.json" // the same, from the pathfinder_static build
	fileSMIXML       = "nvidia-smi-q.xml"   // nvidia-smi -q -x
	fileSMIQuery     = "nvidia-smi-query.csv"
	fileCUDA         = "cuda.json" // gpucheck cuda
	fileNFD          = "nfd.txt"   // driver --format nfd
	fileDoctor       = "doctor.txt"
	smiQueryFields   = "index,pci.bus_id,name,uuid,driver_version,compute_cap" // the order of fileSMIQuery's columns
)

// methodFile is where the script saves driver --json --methods NAME.
func methodFile(name string) string { return "driver-" + name + ".json" }

// saved is everything the script saved, read back; a file that is missing or unreadable is a
// note, and its facts are absent.
type saved struct {
	all, static *driver.Report
	methods     []*driver.Report // one per method, in the order of all's methods
	methodNames []string
	smiXML      *smiLog
	smiQuery    []map[string]string // one per GPU, by smiQueryFields
	cuda        *cudaAnswer
	nfd         map[string]string
	doctor      string
	notes       []string
}

func readSaved(dir string) (*saved, error) {
	s := &saved{}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%q is not a directory of saved outputs", dir)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.notes = append(s.notes, name+": not saved")
		case err != nil:
			s.notes = append(s.notes, err.Error())
		case len(b) == 0:
			s.notes = append(s.notes, name+": empty")
			return nil
		}
		if b, _ := os.ReadFile(filepath.Join(dir, name+".err")); len(strings.TrimSpace(string(b))) > 0 {
			s.notes = append(s.notes, name+": "+firstLine(string(b)))
		}
		return b
	}
	decode := func(name string, unmarshal func([]byte, any) error, v any) bool {
		b := read(name)
		if b == nil {
			return false
		}
		if err := unmarshal(b, v); err != nil {
			s.notes = append(s.notes, fmt.Sprintf("%s: %v", name, err))
			return false
		}
		return true
	}
	report := func(name string) *driver.Report {
		if r := (&driver.Report{}); decode(name, json.Unmarshal, r) {
			return r
		}
		return nil
	}
	s.all, s.static = report(fileDriverAll), report(fileDriverStatic)
	if s.all != nil {
		for _, m := range s.all.Methods {
			if m.Name == "setup" {
				continue
			}
			if r := report(methodFile(m.Name)); r != nil {
				s.methods = append(s.methods, r)
				s.methodNames = append(s.methodNames, m.Name)
			}
		}
	}
	if l := (&smiLog{}); decode(fileSMIXML, xml.Unmarshal, l) {
		s.smiXML = l
	}
	if b := read(fileSMIQuery); b != nil {
		s.smiQuery = parseSMIQuery(string(b))
	}
	if c := (&cudaAnswer{}); decode(fileCUDA, json.Unmarshal, c) {
		s.cuda = c
	}
	if b := read(fileNFD); b != nil {
		s.nfd = map[string]string{}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				s.nfd[k] = v
			}
		}
	}
	s.doctor = string(read(fileDoctor))
	return s, nil
}

// smiLog is the part of nvidia-smi -q -x that the table compares.
type smiLog struct {
	DriverVersion string `xml:"driver_version"`
	CUDAVersion   string `xml:"cuda_version"`
	AttachedGPUs  string `xml:"attached_gpus"`
	GPUs          []struct {
		ID          string `xml:"id,attr"`
		ProductName string `xml:"product_name"`
		UUID        string `xml:"uuid"`
		MinorNumber string `xml:"minor_number"`
		PCI         struct {
			BusID    string `xml:"pci_bus_id"`
			DeviceID string `xml:"pci_device_id"` // "233010DE": device id, then vendor id
		} `xml:"pci"`
	} `xml:"gpu"`
}

// parseSMIQuery reads nvidia-smi --query-gpu=smiQueryFields --format=csv,noheader; a run without
// compute_cap (drivers before 510 lack it) has one column less.
func parseSMIQuery(text string) []map[string]string {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	records, _ := r.ReadAll()
	fields := strings.Split(smiQueryFields, ",")
	var out []map[string]string
	for _, rec := range records {
		m := map[string]string{}
		for i, v := range rec {
			if i < len(fields) {
				m[fields[i]] = strings.TrimSpace(v)
			}
		}
		out = append(out, m)
	}
	return out
}

// busKey writes a PCI bus id as sysfs does, 0000:65:00.0, whatever the tool's width and case.
func busKey(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) > 12 {
		id = id[len(id)-12:]
	}
	return id
}

// value is one fact as one source said it.
type value struct{ source, v string }

// row is one fact: what each of pathfinder's methods said, and what the driver's tools said.
type row struct {
	fact       string
	pathfinder []value
	tools      []value
	uncompared map[string]string // a method whose value is another kind of answer: why it is not compared
	sourced    bool              // pathfinder's values end with their source, "9.0 (nvml)", which is not compared
}

// rows builds the table's facts from what was saved.
func (s *saved) rows() []row {
	var rows []row
	add := func(fact string, pf func(r *driver.Report) string, tools []value) {
		rw := row{fact: fact, tools: nonEmpty(tools)}
		for i, r := range s.methods {
			rw.pathfinder = append(rw.pathfinder, value{s.methodNames[i], pf(r)})
		}
		if s.all != nil {
			rw.pathfinder = append(rw.pathfinder, value{"all methods", pf(s.all)})
		}
		if s.static != nil {
			rw.pathfinder = append(rw.pathfinder, value{"all methods, static build", pf(s.static)})
		}
		rw.pathfinder = nonEmpty(rw.pathfinder)
		rows = append(rows, rw)
	}
	var smiDriver, smiCUDA, smiCount string
	if s.smiXML != nil {
		smiDriver, smiCUDA, smiCount = s.smiXML.DriverVersion, s.smiXML.CUDAVersion, strings.TrimLeft(s.smiXML.AttachedGPUs, "0")
		if smiCount == "" && s.smiXML.AttachedGPUs != "" {
			smiCount = "0"
		}
	}
	var queryDriver, queryCount string
	if s.smiQuery != nil {
		queryCount = fmt.Sprint(len(s.smiQuery))
		if len(s.smiQuery) > 0 {
			queryDriver = s.smiQuery[0]["driver_version"]
		}
	}
	var cudaVer, cudaCount string
	if s.cuda != nil {
		cudaVer = cudaVersion(s.cuda.DriverVersion)
		if s.cuda.Error == "" {
			cudaCount = fmt.Sprint(s.cuda.DeviceCount)
		}
	}
	add("driver version", func(r *driver.Report) string { return r.DriverVersion },
		[]value{{"nvidia-smi -q -x", smiDriver}, {"nvidia-smi --query-gpu", queryDriver}})
	add("user-space driver version", func(r *driver.Report) string { return r.UserSpaceVersion },
		[]value{{"nvidia-smi -q -x", smiDriver}})
	add("cuda driver version", func(r *driver.Report) string { return r.CUDADriverVersion },
		[]value{{"cuDriverGetVersion", cudaVer}, {"nvidia-smi -q -x", smiCUDA}})
	add("max cuda toolkit", func(r *driver.Report) string { return r.MaxCUDA },
		[]value{{"cuDriverGetVersion", cudaVer}, {"nvidia-smi -q -x", smiCUDA}})
	add("gpu count", func(r *driver.Report) string {
		n := 0
		for _, g := range r.GPUs {
			if g.Index >= 0 {
				n++
			}
		}
		if n == 0 {
			return ""
		}
		return fmt.Sprint(n)
	}, []value{{"cuDeviceGetCount", cudaCount}, {"nvidia-smi -q -x", smiCount}, {"nvidia-smi --query-gpu", queryCount}})

	for _, bus := range s.buses() {
		gpu := func(r *driver.Report) *driver.GPU {
			for i := range r.GPUs {
				if busKey(r.GPUs[i].PCIBusID) == bus {
					return &r.GPUs[i]
				}
			}
			return nil
		}
		fact := func(get func(g *driver.GPU) string) func(r *driver.Report) string {
			return func(r *driver.Report) string {
				if g := gpu(r); g != nil {
					return get(g)
				}
				return ""
			}
		}
		tools := func(xmlField func(i int) string, queryField, cudaField string) []value {
			var out []value
			if s.smiXML != nil {
				for i, g := range s.smiXML.GPUs {
					if busKey(g.PCI.BusID) == bus || busKey(g.ID) == bus {
						out = append(out, value{"nvidia-smi -q -x", xmlField(i)})
					}
				}
			}
			for _, q := range s.smiQuery {
				if busKey(q["pci.bus_id"]) == bus && queryField != "" {
					out = append(out, value{"nvidia-smi --query-gpu", q[queryField]})
				}
			}
			if s.cuda != nil && cudaField != "" {
				for _, d := range s.cuda.Devices {
					if busKey(d.PCIBusID) == bus {
						v := map[string]string{"name": d.Name, "uuid": d.UUID, "cc": d.ComputeCapability}[cudaField]
						out = append(out, value{"libcuda", v})
					}
				}
			}
			return out
		}
		none := func(int) string { return "" }
		add("gpu "+bus+" name", fact(func(g *driver.GPU) string { return g.Name }),
			tools(func(i int) string { return s.smiXML.GPUs[i].ProductName }, "name", "name"))
		rows[len(rows)-1].uncompared = map[string]string{"pci": "not compared: the PCI id database's name for the chip"}
		add("gpu "+bus+" uuid", fact(func(g *driver.GPU) string { return g.UUID }),
			tools(func(i int) string { return s.smiXML.GPUs[i].UUID }, "uuid", "uuid"))
		add("gpu "+bus+" compute capability", fact(func(g *driver.GPU) string {
			if g.ComputeCapability == "" {
				return ""
			}
			return g.ComputeCapability + " (" + g.ComputeCapabilitySource + ")"
		}), tools(none, "compute_cap", "cc"))
		rows[len(rows)-1].sourced = true
		add("gpu "+bus+" index", fact(func(g *driver.GPU) string {
			if g.Index < 0 {
				return ""
			}
			return fmt.Sprint(g.Index)
		}), tools(none, "index", ""))
		add("gpu "+bus+" device id", fact(func(g *driver.GPU) string { return g.DeviceID }),
			tools(func(i int) string {
				id := strings.ToLower(s.smiXML.GPUs[i].PCI.DeviceID)
				if len(id) != 8 {
					return ""
				}
				return "0x" + id[:4]
			}, "", ""))
	}
	if s.nfd != nil {
		first := ""
		if len(s.smiQuery) > 0 {
			first = s.smiQuery[0]["pci.bus_id"]
		}
		var firstName, firstCC string
		for _, q := range s.smiQuery {
			if q["pci.bus_id"] == first {
				firstName, firstCC = strings.ReplaceAll(q["name"], " ", "-"), q["compute_cap"]
			}
		}
		label := func(name string, tools ...value) {
			rows = append(rows, row{fact: "nfd " + name, pathfinder: nonEmpty([]value{{"driver --format nfd", s.nfd[name]}}), tools: nonEmpty(tools)})
		}
		label("nvidia.com/cuda.driver-version.full", value{"nvidia-smi -q -x", smiDriver})
		label("nvidia.com/cuda.runtime-version.full", value{"cuDriverGetVersion", cudaVer}, value{"nvidia-smi -q -x", smiCUDA})
		label("nvidia.com/gpu.count", value{"cuDeviceGetCount", cudaCount}, value{"nvidia-smi --query-gpu", queryCount})
		label("nvidia.com/gpu.product", value{"nvidia-smi --query-gpu", firstName})
		major, minor, _ := strings.Cut(firstCC, ".")
		label("nvidia.com/gpu.compute.major", value{"nvidia-smi --query-gpu", major})
		label("nvidia.com/gpu.compute.minor", value{"nvidia-smi --query-gpu", minor})
	}
	return rows
}

// buses is every GPU's PCI bus id that pathfinder or a tool saw, sorted.
func (s *saved) buses() []string {
	seen := map[string]bool{}
	for _, r := range append([]*driver.Report{s.all, s.static}, s.methods...) {
		if r == nil {
			continue
		}
		for _, g := range r.GPUs {
			if g.PCIBusID != "" {
				seen[busKey(g.PCIBusID)] = true
			}
		}
	}
	if s.smiXML != nil {
		for _, g := range s.smiXML.GPUs {
			seen[busKey(g.PCI.BusID)] = true
		}
	}
	for _, q := range s.smiQuery {
		seen[busKey(q["pci.bus_id"])] = true
	}
	if s.cuda != nil {
		for _, d := range s.cuda.Devices {
			if d.PCIBusID != "" {
				seen[busKey(d.PCIBusID)] = true
			}
		}
	}
	delete(seen, "")
	out := make([]string, 0, len(seen))
	for b := range seen {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}

func nonEmpty(vs []value) []value {
	return slices.DeleteFunc(vs, func(v value) bool { return v.v == "" })
}

// write prints the table, then the notes and every disagreement; it returns how many there were.
func (s *saved) write(w io.Writer) int {
	var disagree []string
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FACT\tPATHFINDER (METHOD)\tVALUE\tDRIVER'S OWN TOOLS\tVERDICT")
	for _, r := range s.rows() {
		tools := describe(r.tools)
		toolValues := map[string]bool{}
		for _, t := range r.tools {
			toolValues[t.v] = true
		}
		if len(toolValues) > 1 {
			disagree = append(disagree, fmt.Sprintf("%s: the driver's tools disagree: %s", r.fact, tools))
		}
		if len(r.pathfinder) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t%s\t%s\n", r.fact, orDash(tools), "not reported by pathfinder")
			continue
		}
		for i, p := range r.pathfinder {
			v := p.v
			if r.sourced {
				v, _, _ = strings.Cut(v, " (")
			}
			verdict := "no reference"
			switch {
			case r.uncompared[p.source] != "":
				verdict = r.uncompared[p.source]
			case len(toolValues) == 0:
			case toolValues[v] && len(toolValues) == 1:
				verdict = "agree"
			case toolValues[v]:
				verdict = "agrees with one tool"
			default:
				verdict = "DISAGREE"
				disagree = append(disagree, fmt.Sprintf("%s: pathfinder's %s says %s, %s", r.fact, p.source, p.v, tools))
			}
			fact, ref := r.fact, tools
			if i > 0 {
				fact, ref = "", `"`
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", fact, p.source, p.v, orDash(ref), verdict)
		}
	}
	tw.Flush()
	if s.all != nil {
		fmt.Fprintf(w, "\npathfinder driver: %s (%s)\n", s.all.State, s.all.Summary)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, m := range s.all.Methods {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", m.Name, m.Outcome, m.Detail)
		}
		tw.Flush()
	}
	if s.cuda != nil && s.cuda.Error != "" {
		fmt.Fprintf(w, "libcuda through pathfinder's Go API: %s\n", s.cuda.Error)
	} else if s.cuda != nil {
		fmt.Fprintf(w, "libcuda through pathfinder's Go API: %s (%s)\n", s.cuda.Library, s.cuda.FoundVia)
	}
	if d := strings.TrimSpace(s.doctor); d != "" {
		fmt.Fprintf(w, "doctor: %s\n", strings.Join(doctorHead(d), " | "))
	}
	for _, n := range s.notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if len(disagree) == 0 {
		fmt.Fprintln(w, "disagreements: none")
		return 0
	}
	fmt.Fprintf(w, "disagreements: %d\n", len(disagree))
	for _, d := range disagree {
		fmt.Fprintf(w, "  - %s\n", d)
	}
	return len(disagree)
}

// describe writes the tools' values as "12.4 (cuDriverGetVersion, nvidia-smi -q -x)", grouped.
func describe(vs []value) string {
	var order []string
	by := map[string][]string{}
	for _, v := range vs {
		if by[v.v] == nil {
			order = append(order, v.v)
		}
		by[v.v] = append(by[v.v], v.source)
	}
	parts := make([]string, len(order))
	for i, v := range order {
		parts[i] = v + " (" + strings.Join(by[v], ", ") + ")"
	}
	return strings.Join(parts, "; ")
}

// doctorHead is doctor's lines that say the libraries and the driver.
func doctorHead(out string) []string {
	var head []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "libraries") || strings.HasPrefix(l, "driver") || strings.HasSuffix(l, "problems") || strings.HasSuffix(l, "problem") || strings.HasPrefix(l, "no problems") {
			head = append(head, strings.Join(strings.Fields(l), " "))
		}
	}
	return head
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
