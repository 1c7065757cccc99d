package driver

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// driverVersionRE accepts what NVIDIA prints: 550.144.03, 580.142 (two components are real, the third
// is optional) and Windows' 572.60. Tokens are short so garbage never passes as a version.
var driverVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,4}){1,2}$`) })

func validDriverVersion(s string) bool { return driverVersionRE().MatchString(s) }

// parseComputeCapabilities reads ComputeCapabilityPin: compute capabilities like 9.0, one a GPU,
// separated by commas.
func parseComputeCapabilities(s string) ([]string, error) {
	var ccs []string
	for _, cc := range strings.Split(s, ",") {
		cc = strings.TrimSpace(cc)
		if !isComputeCapability(cc) {
			return nil, fmt.Errorf("%q is not a compute capability like 9.0 (for several GPUs: 9.0,8.6)", cc)
		}
		ccs = append(ccs, cc)
	}
	return ccs, nil
}

// procVersion is what /proc/driver/nvidia/version says.
type procVersion struct {
	Version string // the driver version, or the L4T release when L4T is true
	Module  string // "open" or "proprietary"
	Arch    string // "x86_64", "aarch64", … ("" on lines too old to say)
	// L4T marks a Jetson line: its number is an L4T release (34.1.1), not a driver version.
	L4T bool
}

// parseProcVersion reads the NVRM line, whose shape kernel-open/nvidia/nv-procfs.c and utils.mk define:
//
//	NVRM version: NVIDIA UNIX x86_64 Kernel Module  375.74  Wed Jun 14 01:39:39 PDT 2017
//	NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build  (dvs-builder@…)  …
//	NVRM version: NVIDIA UNIX Kernel Module for aarch64  34.1.1  Release Build  (buildbrain@mobile-…)  …
func parseProcVersion(data []byte) (procVersion, error) {
	var line string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "NVRM version:"); ok {
			line = strings.TrimSpace(rest)
			break
		}
	}
	if line == "" {
		return procVersion{}, fmt.Errorf(`no "NVRM version:" line`)
	}
	before, after, ok := strings.Cut(line, "Kernel Module")
	if !ok || !strings.HasPrefix(before, "NVIDIA UNIX") {
		return procVersion{}, fmt.Errorf("unrecognized NVRM line %q", line)
	}
	pv := procVersion{Module: "proprietary"}
	for _, f := range strings.Fields(strings.TrimPrefix(before, "NVIDIA UNIX")) {
		if f == "Open" {
			pv.Module = "open"
		} else {
			pv.Arch = f
		}
	}
	rest := strings.Fields(after)
	if len(rest) >= 2 && rest[0] == "for" {
		pv.Arch, rest = rest[1], rest[2:]
	}
	if len(rest) == 0 || !validDriverVersion(rest[0]) {
		return procVersion{}, fmt.Errorf("NVRM line has no driver version: %q", line)
	}
	pv.Version = rest[0]
	// Jetson's kernel module prints its L4T release (28.x … 36.x) where desktop drivers print their
	// version; no aarch64 desktop driver was ever numbered below 100, so the major tells them apart.
	if major, _ := strconv.Atoi(strings.Split(pv.Version, ".")[0]); pv.Arch == "aarch64" && major < 100 {
		pv.L4T = true
	}
	return pv, nil
}

// parseSysVersion reads /sys/module/nvidia/version: MODULE_VERSION(NV_VERSION_STRING), the bare version
// and a newline.
func parseSysVersion(data []byte) (string, error) {
	v := strings.TrimSpace(string(data))
	if !validDriverVersion(v) {
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return "", fmt.Errorf("%q is not a driver version", v)
	}
	return v, nil
}

var tegraReleaseRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^# R([0-9]+) \(release\), REVISION: ([0-9]+(?:\.[0-9]+)*)`)
})

// parseTegraRelease turns /etc/nv_tegra_release ("# R35 (release), REVISION: 4.1, GCID: …") into "35.4.1".
func parseTegraRelease(data []byte) (string, error) {
	first, _, _ := strings.Cut(string(data), "\n")
	m := tegraReleaseRE().FindStringSubmatch(first)
	if m == nil {
		return "", fmt.Errorf("unrecognized nv_tegra_release line %q", first)
	}
	return m[1] + "." + m[2], nil
}

// cudaVersionString turns the CUDA API's integer (12040) into "12.4".
func cudaVersionString(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}
