package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/internal/compat"
)

// compatibilityDoc is docs/compatibility.md, and the section under heading (to the next "## ").
func compatibilityDoc(t *testing.T, heading string) string {
	t.Helper()
	_, section, found := strings.Cut(repoFile(t, "docs/compatibility.md"), "\n## "+heading+"\n")
	if !found {
		t.Fatalf("docs/compatibility.md has no section %q", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// codeBlocks are the fenced blocks of a document's text, each without its fences.
func codeBlocks(doc string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// pinnedReport probes an empty machine with the driver pinned.
func pinnedReport(t *testing.T, version string) *driver.Report {
	t.Helper()
	return pinnedProbe(t, map[string]string{"PATHFINDER_DRIVER_VERSION": version})
}

// pinnedProbe probes an empty machine, in vars' environment, with the pins' method alone.
func pinnedProbe(t *testing.T, vars map[string]string) *driver.Report {
	t.Helper()
	return driver.Probe(context.Background(), driver.Options{Root: t.TempDir(), Methods: []string{"override"},
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
}

// TestDocs_compatibilityRules: the rules' examples are what the rules answer.
func TestDocs_compatibilityRules(t *testing.T) {
	t.Parallel()
	doc := strings.ReplaceAll(strings.Join(strings.Fields(compatibilityDoc(t, "NVIDIA's rules")+compatibilityDoc(t, "The minimum drivers")), " "), "`", "")
	r := pinnedReport(t, "550.54.14")
	d := compat.Driver{Version: r.DriverVersion, MaxCUDA: r.MaxCUDA}
	old := compat.Driver{Version: "450.51.06", MaxCUDA: pinnedReport(t, "450.51.06").MaxCUDA}
	for _, want := range []string{
		"CUDA " + r.MaxCUDA + " for driver 550.54.14",
		d.Check(compat.Version{Major: 13}).Reason,
		"driver 450.51.06 runs CUDA " + old.MaxCUDA + ", but " + old.Check(compat.Version{Major: 11, Minor: 8, HasMinor: true}).Reason,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/compatibility.md lacks %q", want)
		}
	}
}

// TestDocs_minimumDrivers: the page's table is compat's, row for row, and names the documents
// compat's table cites.
func TestDocs_minimumDrivers(t *testing.T) {
	t.Parallel()
	section := compatibilityDoc(t, "The minimum drivers")
	rows := regexp.MustCompile(`(?m)^\| (\d+)\.x \| ([0-9.]+) \| ([0-9.]+) \|$`).FindAllStringSubmatch(section, -1)
	if len(rows) != 3 {
		t.Fatalf("%d rows in the table", len(rows))
	}
	for _, row := range rows {
		major, _ := strconv.Atoi(row[1])
		linux, _ := compat.MinimumDriver(major, false)
		windows, _ := compat.MinimumDriver(major, true)
		if row[2] != linux || row[3] != windows {
			t.Errorf("CUDA %s: the page says %s and %s, compat %s and %s", row[1], row[2], row[3], linux, windows)
		}
	}
	code, err := os.ReadFile("../../internal/compat/compat.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range regexp.MustCompile(`<(https://[^>]+)>`).FindAllStringSubmatch(section, -1) {
		if !bytes.Contains(code, []byte(url[1])) {
			t.Errorf("internal/compat/compat.go does not cite %s", url[1])
		}
	}
}

// TestDocs_runs: the page's example of runs, JSON and text, is what pathfinder driver answers for
// 550.54.14, and the page names every machine of testdata/driver/runs.json.
func TestDocs_runs(t *testing.T) {
	t.Parallel()
	section := compatibilityDoc(t, "What a driver runs: `runs`")
	blocks := codeBlocks(section)
	if len(blocks) != 2 {
		t.Fatalf("%d code blocks", len(blocks))
	}
	r := pinnedReport(t, "550.54.14")
	if b, _ := json.MarshalIndent(r.Runs, "", "  "); string(b)+"\n" != blocks[0] {
		t.Errorf("the JSON example is not driver 550.54.14's runs:\n%s", b)
	}
	var text bytes.Buffer
	writeDriverText(&text, r)
	_, runs, _ := strings.Cut(text.String(), "\nruns ")
	runs, _, _ = strings.Cut(runs, "\ngpus ")
	if words := strings.Fields("runs " + runs); strings.Join(words, " ") != strings.Join(strings.Fields(blocks[1]), " ") {
		t.Errorf("the text example is not driver 550.54.14's:\n%s", text.String())
	}
	data, err := os.ReadFile("testdata/driver/runs.json")
	if err != nil {
		t.Fatal(err)
	}
	var machines []struct{ Machine string }
	json.Unmarshal(data, &machines)
	flat := strings.Join(strings.Fields(section), " ")
	for _, m := range machines {
		if name := strings.Fields(m.Machine)[0]; !strings.Contains(flat, name) || len(machines) != 8 {
			t.Errorf("the page does not name %q of %d machines", m.Machine, len(machines))
		}
	}
}

// TestDocs_variant: the page's shortened configs are the golden output's: each value it names, in
// order, the ellipses standing for what lies between, and each count.
func TestDocs_variant(t *testing.T) {
	t.Parallel()
	blocks := codeBlocks(compatibilityDoc(t, "For installers: `--format variant`"))
	if len(blocks) != 2 || !strings.Contains(blocks[0], "PATHFINDER_DRIVER_VERSION=550.54.14 PATHFINDER_COMPUTE_CAPABILITY=9.0 pathfinder driver --format variant") {
		t.Fatalf("code blocks %q", blocks)
	}
	data, err := os.ReadFile("testdata/driver/variant-550.54.14-9.0.json")
	if err != nil {
		t.Fatal(err)
	}
	var configs []driver.VariantConfig
	if err := json.Unmarshal(data, &configs); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^(\S+)\s+(.*?)\s+\((\d+) values\)$`)
	lines := strings.Split(strings.TrimSpace(blocks[1]), "\n")
	if len(lines) != len(configs) {
		t.Fatalf("%d lines for %d configs", len(lines), len(configs))
	}
	for i, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil || m[1] != configs[i].Name || m[3] != strconv.Itoa(len(configs[i].Values)) {
			t.Errorf("line %q, config %s of %d values", l, configs[i].Name, len(configs[i].Values))
			continue
		}
		named := strings.Split(m[2], ", ")
		// Every value named is there in order; a value next to another, with no ellipsis between,
		// comes right after it, and the first and last are the config's.
		at := -1
		for j, v := range named {
			if v == "…" {
				continue
			}
			k := slices.Index(configs[i].Values, v)
			if k <= at || j > 0 && named[j-1] != "…" && k != at+1 || j == 0 && k != 0 {
				t.Errorf("%s: %q out of place in %v", m[1], v, configs[i].Values)
			}
			at = k
		}
		if at != len(configs[i].Values)-1 {
			t.Errorf("%s: the line ends before the values do", m[1])
		}
	}
}

// TestREADME_driverCompatibility: what README says of runs and --format variant holds: runs covers
// CUDA 11, 12 and 13 in its three words, with the minimum driver for no; the variant configs are the
// three it names, none without a working driver; the compute-capability pin gives the GPUs.
func TestREADME_driverCompatibility(t *testing.T) {
	t.Parallel()
	for _, want := range []string{
		"and runs: for CUDA 11, 12 and 13, whether the driver runs it (full up to a minor, minor-version, or no with the minimum driver that would), by NVIDIA's rules;",
		"--format variant prints what NVIDIA's wheel-variant provider returns from get_supported_configs for the nvidia namespace (cuda_version_lower_bound, cuda_version_upper_bound, sm_arch), without NVML and in the static build too, and [] unless the driver works; PATHFINDER_COMPUTE_CAPABILITY=9.0 pins the GPUs as PATHFINDER_DRIVER_VERSION pins the driver",
		"the CUDA majors it runs, each GPU (--json, --format nfd|nodefeature|variant)",
	} {
		if !strings.Contains(readme(t), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	for _, pin := range []string{"450.51.06", "550.54.14", "580.65.06"} {
		var majors []string
		for _, s := range pinnedReport(t, pin).Runs {
			majors = append(majors, s.CUDA)
			if !slices.Contains([]driver.Compat{driver.CompatFull, driver.CompatMinorVersion, driver.CompatNo}, s.Compat) || s.Compat == driver.CompatFull && s.UpTo == "" || s.Compat == driver.CompatNo && s.MinimumDriver == "" {
				t.Errorf("driver %s: %+v", pin, s)
			}
		}
		if strings.Join(majors, ",") != "11,12,13" {
			t.Errorf("driver %s runs lists %v", pin, majors)
		}
	}
	r := pinnedProbe(t, map[string]string{"PATHFINDER_DRIVER_VERSION": "550.54.14", "PATHFINDER_COMPUTE_CAPABILITY": "9.0"})
	var names []string
	for _, c := range r.VariantConfigs() {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "cuda_version_lower_bound,cuda_version_upper_bound,sm_arch" || len(r.GPUs) != 1 || r.GPUs[0].ComputeCapability != "9.0" {
		t.Errorf("configs %v, GPUs %+v", names, r.GPUs)
	}
	if got := pinnedReport(t, "banana").VariantConfigs(); got == nil || len(got) != 0 {
		t.Errorf("no working driver: %v", got)
	}
}
