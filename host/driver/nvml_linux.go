//go:build !pathfinder_static

package driver

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/ebitengine/purego"

	"github.com/pathfinder-dev/pathfinder/internal/english"
)

// nvmlFuncs are the NVML entry points the probe calls, bound with purego.
type nvmlFuncs struct {
	init                           func() int32
	shutdown                       func() int32
	systemGetDriverVersion         func(buf *byte, length uint32) int32
	systemGetCudaDriverVersion     func(v *int32) int32
	deviceGetCount                 func(n *uint32) int32
	deviceGetHandleByIndex         func(index uint32, device *uintptr) int32
	deviceGetName                  func(device uintptr, buf *byte, length uint32) int32
	deviceGetUUID                  func(device uintptr, buf *byte, length uint32) int32
	deviceGetPciInfo               func(device uintptr, pci *nvmlPciInfo) int32
	deviceGetCudaComputeCapability func(device uintptr, major, minor *int32) int32
}

// probeNVML asks NVML in this process. Unlike cuInit, nvmlInit leaves later forks alone. It runs on
// its own goroutine so that an NVML stuck on a broken GPU costs Timeout, not the whole probe.
func probeNVML(p *prober) methodResult {
	libs, override := libraryCandidates(p, envNVMLLibrary, "libnvidia-ml.so.1")
	done := make(chan methodResult, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- runNVML(libs, override)
	}()
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r
	case <-timer.C:
		return failed("nvml did not answer within %v (nvmlInit_v2 can hang on a GPU that fell off the bus)", p.timeout)
	case <-p.ctx.Done():
		return failed("nvml: %v", p.ctx.Err())
	}
}

func runNVML(libs []string, override bool) methodResult {
	h, path, err := dlopenFirst(libs)
	if err != nil {
		if override {
			return failed("cannot load %s: %v", envNVMLLibrary, err)
		}
		return unavailable("cannot load %v", err)
	}
	defer purego.Dlclose(h)

	var f nvmlFuncs
	var missing []string
	need := func(name string, fptr any) {
		if !bind(h, name, fptr) {
			missing = append(missing, name)
		}
	}
	need("nvmlInit_v2", &f.init)
	need("nvmlShutdown", &f.shutdown)
	need("nvmlDeviceGetCount_v2", &f.deviceGetCount)
	need("nvmlDeviceGetHandleByIndex_v2", &f.deviceGetHandleByIndex)
	if len(missing) > 0 {
		return failed("%s lacks %s", path, strings.Join(missing, ", "))
	}
	// The rest are optional: an old NVML lacks some, and the others still answer.
	need("nvmlSystemGetDriverVersion", &f.systemGetDriverVersion)
	if !bind(h, "nvmlSystemGetCudaDriverVersion_v2", &f.systemGetCudaDriverVersion) {
		need("nvmlSystemGetCudaDriverVersion", &f.systemGetCudaDriverVersion)
	}
	need("nvmlDeviceGetName", &f.deviceGetName)
	need("nvmlDeviceGetUUID", &f.deviceGetUUID)
	need("nvmlDeviceGetPciInfo_v3", &f.deviceGetPciInfo)
	need("nvmlDeviceGetCudaComputeCapability", &f.deviceGetCudaComputeCapability)

	if r := f.init(); r != 0 {
		res := failed("%s: nvmlInit_v2 returned %s", path, nvmlReturnName(r))
		res.signal = nvmlSignals()[r]
		return res
	}
	defer f.shutdown()

	obs := &observation{}
	var problems []string
	if f.systemGetDriverVersion != nil {
		buf := make([]byte, nvmlDriverVersionBufferSize)
		if r := f.systemGetDriverVersion(&buf[0], uint32(len(buf))); r != 0 {
			problems = append(problems, "nvmlSystemGetDriverVersion returned "+nvmlReturnName(r))
		} else if v := cString(buf); validDriverVersion(v) {
			obs.driverVersion = v
		} else {
			problems = append(problems, fmt.Sprintf("nvmlSystemGetDriverVersion answered %q", v))
		}
	}
	if f.systemGetCudaDriverVersion != nil {
		var v int32
		if r := f.systemGetCudaDriverVersion(&v); r != 0 {
			problems = append(problems, "nvmlSystemGetCudaDriverVersion_v2 returned "+nvmlReturnName(r))
		} else {
			obs.cudaVersion = cudaVersionString(int(v))
		}
	}
	var count uint32
	if r := f.deviceGetCount(&count); r != 0 {
		return failed("%s: nvmlDeviceGetCount_v2 returned %s", path, nvmlReturnName(r))
	}
	for i := uint32(0); i < count; i++ {
		g, errs := nvmlDevice(&f, i)
		problems = append(problems, errs...)
		if g != nil {
			obs.gpus = append(obs.gpus, *g)
		}
	}
	detail := fmt.Sprintf("%s: driver %s, CUDA %s, %s", path, orDash(obs.driverVersion), orDash(obs.cudaVersion), english.Plural(len(obs.gpus), "GPU"))
	if len(missing) > 0 {
		detail += "; lacks " + strings.Join(missing, ", ")
	}
	if len(problems) > 0 {
		detail += "; " + strings.Join(problems, "; ")
	}
	return ok(detail, obs)
}

// nvmlDevice reads one GPU; a GPU whose handle NVML cannot give (fallen off the bus) is reported, not fatal.
func nvmlDevice(f *nvmlFuncs, i uint32) (*gpuObs, []string) {
	var dev uintptr
	if r := f.deviceGetHandleByIndex(i, &dev); r != 0 {
		return nil, []string{fmt.Sprintf("GPU %d: nvmlDeviceGetHandleByIndex_v2 returned %s", i, nvmlReturnName(r))}
	}
	g := &gpuObs{index: int(i)}
	var errs []string
	if f.deviceGetName != nil {
		buf := make([]byte, nvmlDeviceNameBufferSize)
		if r := f.deviceGetName(dev, &buf[0], uint32(len(buf))); r == 0 {
			g.name = cString(buf)
		} else {
			errs = append(errs, fmt.Sprintf("GPU %d: nvmlDeviceGetName returned %s", i, nvmlReturnName(r)))
		}
	}
	if f.deviceGetUUID != nil {
		buf := make([]byte, nvmlDeviceUUIDBufferSize)
		if r := f.deviceGetUUID(dev, &buf[0], uint32(len(buf))); r == 0 {
			g.uuid = cString(buf)
		} else {
			errs = append(errs, fmt.Sprintf("GPU %d: nvmlDeviceGetUUID returned %s", i, nvmlReturnName(r)))
		}
	}
	if f.deviceGetPciInfo != nil {
		var pci nvmlPciInfo
		if r := f.deviceGetPciInfo(dev, &pci); r == 0 {
			g.busID = canonicalBusID(cString(pci.BusID[:]))
			if uint16(pci.PCIDeviceID) == nvidiaVendorID {
				g.deviceID = fmt.Sprintf("0x%04x", pci.PCIDeviceID>>16)
			}
		} else {
			errs = append(errs, fmt.Sprintf("GPU %d: nvmlDeviceGetPciInfo_v3 returned %s", i, nvmlReturnName(r)))
		}
	}
	if f.deviceGetCudaComputeCapability != nil {
		var major, minor int32
		if r := f.deviceGetCudaComputeCapability(dev, &major, &minor); r == 0 && major > 0 {
			g.cc = fmt.Sprintf("%d.%d", major, minor)
		} else if r != 0 {
			errs = append(errs, fmt.Sprintf("GPU %d: nvmlDeviceGetCudaComputeCapability returned %s", i, nvmlReturnName(r)))
		}
	}
	return g, errs
}
