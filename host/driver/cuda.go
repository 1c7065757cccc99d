package driver

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/child"
	"github.com/pathfinder-dev/pathfinder/internal/english"
)

// The child protocol (internal/child): the parent re-executes its own binary in the role
// childCUDAProbe; this package's initialisation, which runs before the program's main, recognises
// the role, probes libcuda, prints one JSON object carrying childMagic and exits. So a program that
// imports this package needs nothing in its main, and its main never runs in the child.
const (
	envChildLibraries = "PATHFINDER_INTERNAL_CUDA_LIBRARIES" // JSON array of the libraries to try, in order
	childCUDAProbe    = "cuda-probe"
	childMagic        = "pathfinder cuda-probe 1"
)

// CUresult values worth naming; cuGetErrorName is not asked because the library may be the problem.
var cudaResultNames = sync.OnceValue(func() map[int]string {
	return map[int]string{
		1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY", 3: "CUDA_ERROR_NOT_INITIALIZED",
		4: "CUDA_ERROR_DEINITIALIZED", 34: "CUDA_ERROR_STUB_LIBRARY", 46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
		100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE", 102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
		304: "CUDA_ERROR_OPERATING_SYSTEM", 802: "CUDA_ERROR_SYSTEM_NOT_READY", 803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
		804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 999: "CUDA_ERROR_UNKNOWN",
	}
})

func cudaResultName(r int) string {
	if n, ok := cudaResultNames()[r]; ok {
		return fmt.Sprintf("%s (%d)", n, r)
	}
	return fmt.Sprintf("CUresult %d", r)
}

// cudaChildResult is the child's answer.
type cudaChildResult struct {
	Magic         string            `json:"pathfinder_child"`
	Library       string            `json:"library,omitempty"`
	DriverVersion int               `json:"cuda_driver_version,omitempty"` // cuDriverGetVersion, e.g. 12040
	Devices       []cudaChildDevice `json:"devices,omitempty"`
	Missing       []string          `json:"missing,omitempty"` // optional symbols the library lacks
	Step          string            `json:"step,omitempty"`    // what failed: "dlopen", "symbols", "cuInit", …
	Code          int               `json:"code,omitempty"`    // its CUresult
	Error         string            `json:"error,omitempty"`
}

type cudaChildDevice struct {
	Ordinal  int    `json:"ordinal"`
	Name     string `json:"name,omitempty"`
	CCMajor  int    `json:"cc_major,omitempty"`
	CCMinor  int    `json:"cc_minor,omitempty"`
	PCIBusID string `json:"pci_bus_id,omitempty"`
	Error    string `json:"error,omitempty"`
}

func init() {
	if child.Role() == childCUDAProbe {
		serveCUDAProbe()
	}
}

// serveCUDAProbe is the child's whole life: probe libcuda, answer, exit. cuInit runs here, not in
// the probing process, because cuInit in a process breaks every fork it makes afterwards.
func serveCUDAProbe() {
	var libs []string
	if err := json.Unmarshal([]byte(os.Getenv(envChildLibraries)), &libs); err != nil || len(libs) == 0 {
		libs = []string{"libcuda.so.1"}
	}
	res := runCUDAChild(libs)
	res.Magic = childMagic
	child.Reply(res)
}

// probeLibcuda runs the child and reads its answer.
func probeLibcuda(p *prober) methodResult {
	if errCannotLoad != nil {
		return unavailable("%v", errCannotLoad)
	}
	if r := child.Role(); r != "" {
		// A child serves its role during initialisation and exits; one that got here was started
		// in a role no package of this program serves, and must not start children of its own.
		return failed("this process is a child in the role %q, which nothing in it serves", r)
	}
	exe, err := os.Executable()
	if err != nil {
		return failed("cannot find this program to re-execute it: %v", err)
	}
	libs, override := libraryCandidates(p, envCUDALibrary, "libcuda.so.1")
	libsJSON, _ := json.Marshal(libs)
	env := append(child.Env(childCUDAProbe, envVisibleGPUs, envCUDALibrary), envChildLibraries+"="+string(libsJSON))
	if v, set := p.lookupEnv(envVisibleGPUs); set {
		env = append(env, envVisibleGPUs+"="+v)
	}
	out := child.Run(p.ctx, p.timeout, 500*time.Millisecond, env, exe)
	if out.TimedOut {
		return failed("the libcuda probe child did not answer within %v (cuInit can hang on a broken GPU)", p.timeout)
	}
	res, ok := decodeChildAnswer(out.Stdout)
	if !ok {
		return failed("%s did not answer as a libcuda probe child (%s); output: %q",
			exe, child.ExitText(out.Err), child.Clip(string(out.Stdout)+string(out.Stderr), 200))
	}
	return cudaChildOutcome(p, res, override)
}

// decodeChildAnswer finds the child's JSON object in its output; a library may print before it.
func decodeChildAnswer(out []byte) (cudaChildResult, bool) {
	var res cudaChildResult
	ok := child.Answer(out, childMagic, &res)
	return res, ok
}

// cudaChildOutcome turns the child's answer into the method's outcome and facts.
func cudaChildOutcome(p *prober, res cudaChildResult, override bool) methodResult {
	cudaVer := cudaVersionString(res.DriverVersion)
	if res.Error != "" {
		msg := res.Error
		if res.Library != "" {
			msg = fmt.Sprintf("%s: %s", res.Library, res.Error)
		}
		if cudaVer != "" {
			msg += fmt.Sprintf(" (cuDriverGetVersion: CUDA %s)", cudaVer)
		}
		switch {
		case res.Step == "dlopen" && !override:
			return unavailable("cannot load %s", res.Error)
		case res.Step == "cuInit" && res.Code == 803:
			r := failed("%s", msg+"; the kernel module and libcuda are different versions")
			r.signal = signalMismatch
			return r
		case res.Step == "cuInit" && res.Code == 100:
			if v, set := p.lookupEnv(envVisibleGPUs); set && v == "" {
				msg += "; CUDA_VISIBLE_DEVICES is set but empty, which hides every GPU from cuInit: unset it"
			} else if set {
				msg += fmt.Sprintf("; CUDA_VISIBLE_DEVICES=%q names no GPU CUDA can use", v)
			}
		case res.Step == "cuInit" && res.Code == 34:
			msg += "; this is the CUDA toolkit's stub libcuda (lib64/stubs), not the driver's: take it off LD_LIBRARY_PATH"
		}
		return failed("%s", msg)
	}
	obs := &observation{cudaVersion: cudaVer}
	var problems []string
	for _, d := range res.Devices {
		if d.Error != "" {
			problems = append(problems, fmt.Sprintf("device %d: %s", d.Ordinal, d.Error))
			continue
		}
		// CUDA ordinals follow CUDA_DEVICE_ORDER (fastest first by default), not NVML's PCI order,
		// so they are not indexes; the bus id ties the device to the others' GPUs.
		g := gpuObs{index: -1, name: d.Name, busID: canonicalBusID(d.PCIBusID)}
		if d.CCMajor > 0 {
			g.cc = fmt.Sprintf("%d.%d", d.CCMajor, d.CCMinor)
		}
		obs.gpus = append(obs.gpus, g)
	}
	detail := fmt.Sprintf("%s: CUDA %s, %s", res.Library, orDash(cudaVer), english.Plural(len(obs.gpus), "device"))
	if len(res.Missing) > 0 {
		detail += "; lacks " + strings.Join(res.Missing, ", ")
	}
	if len(problems) > 0 {
		detail += "; " + strings.Join(problems, "; ")
	}
	return ok(detail, obs)
}
