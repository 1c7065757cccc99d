package driver

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/child"
	"github.com/pathfinder-dev/pathfinder/internal/english"
)

// smiQueryFields is what the probe asks nvidia-smi, one CSV line per GPU in NVML's order.
var smiQueryFields = []string{"driver_version", "compute_cap", "name", "pci.bus_id", "uuid"}

// smiExitMeanings are nvidia-smi's exit codes (its man page; they mirror nvmlReturn_t).
var smiExitMeanings = sync.OnceValue(func() map[int]string {
	return map[int]string{
		2: "invalid argument", 3: "not supported", 4: "no permission", 6: "no GPU found",
		8: "insufficient power", 9: "cannot communicate with the NVIDIA driver", 10: "kernel interrupt problem",
		12: "NVML library not found", 13: "a function is missing from the NVML library", 14: "corrupted infoROM",
		15: "a GPU fell off the bus", 18: "driver/library version mismatch: reboot or reload the kernel module", 255: "other error",
	}
})

// smiSignals are the exit codes that tell the driver's state.
var smiSignals = sync.OnceValue(func() map[int]driverSignal {
	return map[int]driverSignal{9: signalNoDriver, 12: signalNoLibrary, 18: signalMismatch}
})

// probeNvidiaSMI runs nvidia-smi: from PATH, then WSL2's copy. It is last because a subprocess is the
// slowest method and the one most often missing or broken.
func probeNvidiaSMI(p *prober) methodResult {
	path, err := p.lookPath("nvidia-smi")
	if err != nil {
		if wsl := p.path(wslLibDir + "/nvidia-smi"); isExecutable(wsl) {
			path = wsl
		} else {
			return unavailable("nvidia-smi is neither on PATH nor at %s", wsl)
		}
	}
	fields := smiQueryFields
	var notes []string
	out, code, err := p.runTool(path, smiQueryArgs(fields)...)
	if err == nil && code == 2 && bytes.Contains(out, []byte(`"compute_cap" is not a valid field`)) {
		notes = append(notes, "this nvidia-smi predates compute_cap; asked again without it")
		fields = slices.DeleteFunc(slices.Clone(fields), func(f string) bool { return f == "compute_cap" })
		out, code, err = p.runTool(path, smiQueryArgs(fields)...)
	}
	if err != nil {
		return failed("%v", err)
	}
	if code != 0 {
		meaning := smiExitMeanings()[code]
		if meaning == "" {
			meaning = "unknown exit code"
		}
		res := failed("%s exited %d (%s): %s", path, code, meaning, child.Clip(firstLine(out), 300))
		res.signal = smiSignals()[code]
		return res
	}
	rows, err := parseSMICSV(out, fields)
	if err != nil {
		return failed("%s: %v", path, err)
	}
	obs, rowNotes, err := smiObservation(rows, fields)
	if err != nil {
		return failed("%s: %v", path, err)
	}
	notes = append(notes, rowNotes...)
	// The query interface has no field for the CUDA version; the table header has. Only a probe that
	// knows it from nowhere else (a static build, a broken NVML) pays for the second run.
	if p.merge().cuda == "" {
		if hout, hcode, herr := p.runTool(path); herr == nil && hcode == 0 {
			if _, cuda, err := parseSMIHeader(hout); err == nil {
				obs.cudaVersion = cuda
			} else {
				notes = append(notes, err.Error())
			}
		}
	}
	detail := fmt.Sprintf("%s: driver %s, CUDA %s, %s", path, orDash(obs.driverVersion), orDash(obs.cudaVersion), english.Plural(len(obs.gpus), "GPU"))
	if len(notes) > 0 {
		detail += "; " + strings.Join(notes, "; ")
	}
	return ok(detail, &obs)
}

func smiQueryArgs(fields []string) []string {
	return []string{"--query-gpu=" + strings.Join(fields, ","), "--format=csv,noheader"}
}

// runTool runs a program with the probe's timeout. A non-zero exit is a code, not an error: nvidia-smi
// explains its failures on stdout. out holds stdout, then stderr.
func (p *prober) runTool(path string, args ...string) (out []byte, code int, err error) {
	res := child.Run(p.ctx, p.timeout, 200*time.Millisecond, nil, path, args...) // a killed script's children may hold the pipes open
	if res.TimedOut && p.ctx.Err() == nil {
		return nil, -1, fmt.Errorf("%s did not finish within %v", path, p.timeout)
	}
	if err := p.ctx.Err(); err != nil {
		return nil, -1, fmt.Errorf("%s: %v", path, err)
	}
	out = append(res.Stdout, res.Stderr...)
	var ee *exec.ExitError
	if errors.As(res.Err, &ee) {
		return out, ee.ExitCode(), nil
	}
	if res.Err != nil {
		return nil, -1, fmt.Errorf("%v", res.Err)
	}
	return res.Stdout, 0, nil
}

// parseSMICSV reads `nvidia-smi --query-gpu=<fields> --format=csv[,noheader]` output into one row of
// len(fields) values per GPU. A header line is skipped. Only a name can contain a comma, so extra
// commas go back into the name field.
func parseSMICSV(data []byte, fields []string) ([][]string, error) {
	nameAt := slices.Index(fields, "name")
	var rows [][]string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		parts := strings.Split(line, ",")
		for j := range parts {
			parts[j] = strings.TrimSpace(parts[j])
		}
		if len(rows) == 0 && slices.Equal(parts, fields) {
			continue // --format=csv with a header
		}
		if extra := len(parts) - len(fields); extra > 0 && nameAt >= 0 {
			name := strings.Join(parts[nameAt:nameAt+extra+1], ", ")
			parts = slices.Replace(parts, nameAt, nameAt+extra+1, name)
		}
		if len(parts) != len(fields) {
			return nil, fmt.Errorf("nvidia-smi line %d has %d fields, want %d (%s): %q", i+1, len(parts), len(fields), strings.Join(fields, ","), child.Clip(line, 120))
		}
		rows = append(rows, parts)
	}
	return rows, nil
}

// smiMissing reports values nvidia-smi prints instead of an answer: [N/A], [Not Supported],
// [Unknown Error], [GPU requires reset], ERR! (a GPU in trouble).
func smiMissing(v string) bool {
	return v == "" || v == "N/A" || v == "ERR!" || strings.HasPrefix(v, "[")
}

// smiObservation turns parsed rows into facts. All GPUs share one driver; rows that disagree mean the
// output cannot be trusted, and that is an error that says so.
func smiObservation(rows [][]string, fields []string) (observation, []string, error) {
	var obs observation
	var notes, versions []string
	for i, row := range rows {
		g := gpuObs{index: i}
		for j, f := range fields {
			v := row[j]
			if smiMissing(v) {
				if v == "ERR!" || strings.HasPrefix(v, "[Unknown") || strings.HasPrefix(v, "[GPU requires") {
					notes = append(notes, fmt.Sprintf("GPU %d: nvidia-smi answered %s for %s", i, v, f))
				}
				continue
			}
			switch f {
			case "driver_version":
				if !validDriverVersion(v) {
					return observation{}, nil, fmt.Errorf("GPU %d: driver_version %q is not a driver version", i, v)
				}
				if !slices.Contains(versions, v) {
					versions = append(versions, v)
				}
			case "compute_cap":
				if !isComputeCapability(v) {
					return observation{}, nil, fmt.Errorf("GPU %d: compute_cap %q is not major.minor", i, v)
				}
				g.cc = v
			case "name":
				g.name = v
			case "pci.bus_id":
				g.busID = canonicalBusID(v)
			case "uuid":
				g.uuid = v
			}
		}
		obs.gpus = append(obs.gpus, g)
	}
	if len(versions) > 1 {
		return observation{}, nil, fmt.Errorf("nvidia-smi reports %d different driver versions (%s) for one machine", len(versions), strings.Join(versions, ", "))
	}
	if len(versions) == 1 {
		obs.driverVersion = versions[0]
	}
	return obs, notes, nil
}

var computeCapabilityRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,2}\.[0-9]{1,2}$`) })

// isComputeCapability accepts "9.0", "12.1"; also a CUDA version such as "13.3", which has the same shape.
func isComputeCapability(s string) bool { return computeCapabilityRE().MatchString(s) }

var (
	smiDriverRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:Driver|KMD) Version:\s*([0-9][0-9.]*)`) })
	smiCUDARE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`CUDA (?:UMD )?Version:\s*([0-9][0-9.]*|N/A)`) })
)

// parseSMIHeader reads the versions from plain nvidia-smi's table header: "Driver Version: 535.98
// CUDA Version: 12.2", or since 610 "KMD Version: 610.57.04  CUDA UMD Version: 13.3".
func parseSMIHeader(data []byte) (driver, cuda string, err error) {
	if m := smiDriverRE().FindSubmatch(data); m != nil && validDriverVersion(string(m[1])) {
		driver = string(m[1])
	}
	if m := smiCUDARE().FindSubmatch(data); m != nil && string(m[1]) != "N/A" && isComputeCapability(string(m[1])) {
		cuda = string(m[1])
	}
	if driver == "" && cuda == "" {
		return "", "", fmt.Errorf("no driver or CUDA version in the nvidia-smi header")
	}
	return driver, cuda, nil
}

func firstLine(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return "(no output)"
}
