package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/report"
)

// Options configures Probe. The zero value probes this machine with every method.
type Options struct {
	// Root is prepended to every machine path the probe reads: /proc, /sys, /dev, /etc, the WSL
	// library folder /usr/lib/wsl/lib, and the dynamic loader's directories and cache where the
	// driver's libraries are looked for (as the loader inside that tree would, without
	// LD_LIBRARY_PATH). "" means "/". Any other Root is a captured machine: NVML, libcuda and
	// nvidia-smi act on this one, so they do not run.
	Root string
	// Methods lists the methods to run, in order; nil runs MethodNames() in the default order and skips
	// the slow ones (libcuda, nvidia-smi) once earlier methods answered every fact. An explicit list runs
	// every listed method. "setup" always runs first: everything else is read in its light.
	Methods []string
	// LookupEnv reads the environment; nil means os.LookupEnv. It must tell unset from empty because
	// an empty CUDA_VISIBLE_DEVICES hides every GPU from CUDA.
	LookupEnv func(key string) (string, bool)
	// LookPath finds nvidia-smi; nil searches the absolute directories of LookupEnv("PATH").
	LookPath func(file string) (string, error)
	// Timeout bounds each method that can hang: NVML, the libcuda child process and each nvidia-smi run.
	// 0 means 5 seconds.
	Timeout time.Duration

	// rootIsLive makes a test's fake Root stand for this machine, so that stub libraries and fake
	// nvidia-smi scripts run where the Root's files would let the driver's own code run.
	rootIsLive bool
}

const defaultTimeout = 5 * time.Second

// ComputeCapabilityPin names the variable that pins the GPUs, for asking what a machine would get
// from the probe and its rules ("a 550 driver with an sm_90 GPU"): one compute capability a GPU,
// "9.0" or "9.0,8.6". The report's GPUs are then these, their source "override", whatever the
// machine has.
const ComputeCapabilityPin = "PATHFINDER_COMPUTE_CAPABILITY"

// Environment variables the probe reads.
const (
	envOverride     = "PATHFINDER_DRIVER_VERSION" // pins the driver version (tests, pinning)
	envNVMLLibrary  = "PATHFINDER_NVML_LIBRARY"   // loads this file instead of libnvidia-ml.so.1
	envCUDALibrary  = "PATHFINDER_CUDA_LIBRARY"   // loads this file instead of libcuda.so.1
	envVisibleGPUs  = "CUDA_VISIBLE_DEVICES"
	wslLibDir       = "/usr/lib/wsl/lib"
	methodSetup     = "setup"
	methodOverride  = "override"
	methodIoctl     = "ioctl"
	methodSysfs     = "sysfs"
	methodProcfs    = "procfs"
	methodPCI       = "pci"
	methodUserSpace = "userspace"
	methodNVML      = "nvml"
	methodLibcuda   = "libcuda"
	methodNvidiaSMI = "nvidia-smi"
)

type probeMethod struct {
	name string
	run  func(*prober) methodResult
	slow bool // skipped by default once the facts are complete
}

// methods is the default order: the setup first, since the others are read in its light, then
// cheapest and most direct first, so the answer usually comes from
// files and one ioctl in well under a millisecond, and the slow methods only fill what is missing.
var methods = []probeMethod{
	{name: methodSetup, run: probeSetup},
	{name: methodOverride, run: probeOverride},
	{name: methodIoctl, run: probeIoctl},
	{name: methodSysfs, run: probeSysfs},
	{name: methodProcfs, run: probeProcfs},
	{name: methodUserSpace, run: probeUserSpace},
	{name: methodPCI, run: probePCI},
	{name: methodNVML, run: probeNVML},
	{name: methodLibcuda, run: probeLibcuda, slow: true},
	{name: methodNvidiaSMI, run: probeNvidiaSMI, slow: true},
}

// MethodNames returns the method names in the default order.
func MethodNames() []string {
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.name
	}
	return names
}

// observation is what one method saw.
type observation struct {
	source        string
	driverVersion string
	cudaVersion   string
	l4t           string
	kernelModule  string
	gpus          []gpuObs
}

// kernelSources are the methods that read the kernel module's own version.
var kernelSources = []string{methodIoctl, methodSysfs, methodProcfs}

// gpuObs is one GPU as one method saw it; empty strings are unknowns.
type gpuObs struct {
	index        int // -1 when the method has no index
	busID        string
	deviceID     string
	name         string
	uuid         string
	cc           string
	kernelDriver string
	pciClass     string // "0x030200", from the PCI scan
	minor        int    // the device node's minor number (/dev/nvidiaN), from /proc; -1 when unknown
}

type methodResult struct {
	outcome Outcome
	detail  string
	obs     *observation
	signal  driverSignal // what a failure of the driver's own code says about the driver
}

// driverSignal is what the driver's own code (NVML, libcuda, nvidia-smi) said when it failed.
type driverSignal int

const (
	signalNone      driverSignal = iota
	signalMismatch               // NVML_ERROR_LIB_RM_VERSION_MISMATCH, nvidia-smi exit 18, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
	signalNoDriver               // the libraries cannot reach the kernel driver: NVML_ERROR_DRIVER_NOT_LOADED, nvidia-smi exit 9
	signalNoLibrary              // nvidia-smi found no libnvidia-ml (exit 12)
)

func ok(detail string, obs *observation) methodResult {
	return methodResult{outcome: OutcomeOK, detail: detail, obs: obs}
}
func failed(format string, a ...any) methodResult {
	return methodResult{outcome: OutcomeFailed, detail: fmt.Sprintf(format, a...)}
}
func unavailable(format string, a ...any) methodResult {
	return methodResult{outcome: OutcomeUnavailable, detail: fmt.Sprintf(format, a...)}
}
func skipped(format string, a ...any) methodResult {
	return methodResult{outcome: OutcomeSkipped, detail: fmt.Sprintf(format, a...)}
}

// prober carries one Probe call's settings and what its methods found.
type prober struct {
	ctx        context.Context
	root       string
	lookupEnv  func(string) (string, bool)
	lookPath   func(string) (string, error)
	timeout    time.Duration
	explicit   bool
	live       bool // Root is this machine, so the driver's own code may run (where driverCodeBlocked allows)
	setup      Setup
	machine    machine
	userSpace  []UserSpaceLibrary // the driver's libraries as the loader would find them; nil when not looked for
	signals    map[string]driverSignal
	answered   []string // the methods running the driver's own code that answered
	obs        []observation
	pinnedGPUs []GPU // ComputeCapabilityPin's GPUs; nil when it is not set
	notes      []string
	ignored    []report.Ignored // variables given but not used
}

// Probe runs the methods and merges what they found. It never fails: what went wrong is in each
// method's outcome, and Report.Err says whether anything was found.
func Probe(ctx context.Context, opts Options) *Report {
	start := time.Now()
	p := &prober{ctx: ctx, root: opts.Root, lookupEnv: opts.LookupEnv, lookPath: opts.LookPath, timeout: opts.Timeout, signals: map[string]driverSignal{}}
	if p.root == "" {
		p.root = "/"
	}
	p.root = filepath.Clean(p.root)
	p.live = p.root == "/" || opts.rootIsLive
	if p.lookupEnv == nil {
		p.lookupEnv = os.LookupEnv
	}
	if p.timeout <= 0 {
		p.timeout = defaultTimeout
	}
	if p.lookPath == nil {
		p.lookPath = p.searchPath
	}
	names := MethodNames()
	if opts.Methods != nil {
		p.explicit = true
		names = append([]string{methodSetup}, slices.DeleteFunc(slices.Clone(opts.Methods), func(n string) bool { return n == methodSetup })...)
	}
	if v, set := p.lookupEnv(envVisibleGPUs); set && v == "" {
		p.notes = append(p.notes, "CUDA_VISIBLE_DEVICES is set but empty: CUDA programs in this environment see no GPU (cuInit reports CUDA_ERROR_NO_DEVICE); unset it to use the GPUs")
	}

	r := &Report{GPUs: []GPU{}, Methods: []MethodOutcome{}}
	for _, name := range names {
		t0 := time.Now()
		res := p.run(name)
		r.Methods = append(r.Methods, MethodOutcome{Name: name, Outcome: res.outcome, Detail: res.detail, Duration: time.Since(t0)})
		if res.obs != nil { // what a method saw counts even where it failed in part (a bad pin beside a good one)
			res.obs.source = name
			p.obs = append(p.obs, *res.obs)
		}
		if res.signal != signalNone {
			p.signals[name] = res.signal
		}
		if res.outcome == OutcomeOK && slices.Contains(driverViews, name) {
			p.answered = append(p.answered, name)
		}
	}
	p.finish(r)
	r.Duration = time.Since(start)
	return r
}

func (p *prober) run(name string) methodResult {
	i := slices.IndexFunc(methods, func(m probeMethod) bool { return m.name == name })
	if i < 0 {
		return failed("unknown driver probe method %q (known: %s)", name, strings.Join(MethodNames(), ", "))
	}
	if err := p.ctx.Err(); err != nil {
		return skipped("probe cancelled: %v", err)
	}
	m := methods[i]
	if slices.Contains(driverViews, m.name) {
		if why := p.driverCodeBlocked(m.name == methodLibcuda); why != "" {
			return skipped("not run: %s", why)
		}
	}
	if m.slow && !p.explicit && p.merge().complete() {
		return skipped("not needed: earlier methods gave the driver and CUDA versions and every GPU's compute capability")
	}
	return m.run(p)
}

// path returns a machine path under Root.
func (p *prober) path(abs string) string { return filepath.Join(p.root, abs) }

func (p *prober) getenv(key string) string {
	v, _ := p.lookupEnv(key)
	return v
}

// searchPath looks for an executable in the absolute directories of PATH. Relative entries are
// ignored, as exec.LookPath refuses them with exec.ErrDot: a probe must not run ./nvidia-smi.
func (p *prober) searchPath(file string) (string, error) {
	for _, dir := range filepath.SplitList(p.getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue
		}
		path := filepath.Join(dir, file)
		if isExecutable(path) {
			return path, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH", file)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// probeOverride reads the pins: PATHFINDER_DRIVER_VERSION for the driver's version and
// ComputeCapabilityPin for the GPUs. A pin that is not what it should be is not used, and
// Report.Ignored says so; the method then fails, while a good pin beside it still counts.
func probeOverride(p *prober) methodResult {
	res := methodResult{outcome: OutcomeOK}
	var details []string
	notUsed := func(in report.Ignored, detail string) {
		p.ignored = append(p.ignored, in)
		details, res.outcome = append(details, detail), OutcomeFailed
	}
	if v := strings.TrimSpace(p.getenv(envOverride)); v != "" {
		if validDriverVersion(v) {
			res.obs = &observation{driverVersion: v}
			details = append(details, fmt.Sprintf("driver version pinned to %s by %s", v, envOverride))
		} else {
			notUsed(report.Ignored{Name: envOverride, Value: v, Reason: "not a driver version like 550.54.14; the machine was probed instead"},
				fmt.Sprintf("%s=%q is not a driver version like 550.54.14", envOverride, v))
		}
	}
	if v := p.getenv(ComputeCapabilityPin); strings.TrimSpace(v) != "" {
		if ccs, err := parseComputeCapabilities(v); err == nil {
			p.pinnedGPUs = pinnedGPUs(ccs)
			details = append(details, fmt.Sprintf("compute capability pinned to %s by %s", strings.Join(ccs, ","), ComputeCapabilityPin))
		} else {
			notUsed(report.Ignored{Name: ComputeCapabilityPin, Value: v, Reason: err.Error()}, fmt.Sprintf("%s=%q: %v", ComputeCapabilityPin, v, err))
		}
	}
	if len(details) == 0 {
		return skipped("neither %s nor %s is set", envOverride, ComputeCapabilityPin)
	}
	res.detail = strings.Join(details, "; ")
	return res
}

// pinnedGPUs are the GPUs ComputeCapabilityPin stands for, one per compute capability, in order.
func pinnedGPUs(ccs []string) []GPU {
	gpus := make([]GPU, len(ccs))
	for i, cc := range ccs {
		gpus[i] = GPU{Index: i, ComputeCapability: cc, ComputeCapabilitySource: methodOverride, Sources: []string{methodOverride}}
	}
	return gpus
}
