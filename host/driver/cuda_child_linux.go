//go:build !pathfinder_static

package driver

import (
	"fmt"
	"runtime"
	"strings"
)

// CUdevice_attribute values for the compute capability (cuda.h).
const (
	cuDeviceAttributeComputeCapabilityMajor = 75
	cuDeviceAttributeComputeCapabilityMinor = 76
	cuNameBufferSize                        = 256
	cuBusIDBufferSize                       = 32
)

type cudaFuncs struct {
	init               func(flags uint32) int32
	driverGetVersion   func(v *int32) int32
	deviceGetCount     func(n *int32) int32
	deviceGet          func(dev *int32, ordinal int32) int32
	deviceGetName      func(buf *byte, length int32, dev int32) int32
	deviceGetAttribute func(v *int32, attr int32, dev int32) int32
	deviceGetPCIBusID  func(buf *byte, length int32, dev int32) int32
}

// runCUDAChild does the child's work: load libcuda, cuInit, list the devices.
func runCUDAChild(libs []string) cudaChildResult {
	runtime.LockOSThread() // dlerror belongs to the thread that called dlopen
	var res cudaChildResult
	h, path, err := dlopenFirst(libs)
	if err != nil {
		res.Step, res.Error = "dlopen", err.Error()
		return res
	}
	res.Library = path

	var f cudaFuncs
	var missing []string
	need := func(name string, fptr any) {
		if !bind(h, name, fptr) {
			missing = append(missing, name)
		}
	}
	need("cuInit", &f.init)
	need("cuDriverGetVersion", &f.driverGetVersion)
	need("cuDeviceGetCount", &f.deviceGetCount)
	need("cuDeviceGet", &f.deviceGet)
	need("cuDeviceGetAttribute", &f.deviceGetAttribute)
	if len(missing) > 0 {
		res.Step, res.Error = "symbols", "lacks "+strings.Join(missing, ", ")
		return res
	}
	if !bind(h, "cuDeviceGetName", &f.deviceGetName) {
		res.Missing = append(res.Missing, "cuDeviceGetName")
	}
	if !bind(h, "cuDeviceGetPCIBusId", &f.deviceGetPCIBusID) {
		res.Missing = append(res.Missing, "cuDeviceGetPCIBusId")
	}

	// cuDriverGetVersion needs no cuInit, so the CUDA version is known even when no device is usable.
	var v int32
	if r := f.driverGetVersion(&v); r == 0 {
		res.DriverVersion = int(v)
	}
	if r := f.init(0); r != 0 {
		res.Step, res.Code, res.Error = "cuInit", int(r), "cuInit returned "+cudaResultName(int(r))
		return res
	}
	var n int32
	if r := f.deviceGetCount(&n); r != 0 {
		res.Step, res.Code, res.Error = "cuDeviceGetCount", int(r), "cuDeviceGetCount returned "+cudaResultName(int(r))
		return res
	}
	for i := int32(0); i < n; i++ {
		res.Devices = append(res.Devices, cudaDevice(&f, i))
	}
	return res
}

func cudaDevice(f *cudaFuncs, ordinal int32) cudaChildDevice {
	d := cudaChildDevice{Ordinal: int(ordinal)}
	var dev int32
	if r := f.deviceGet(&dev, ordinal); r != 0 {
		d.Error = "cuDeviceGet returned " + cudaResultName(int(r))
		return d
	}
	var major, minor int32
	if r := f.deviceGetAttribute(&major, cuDeviceAttributeComputeCapabilityMajor, dev); r != 0 {
		d.Error = "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR) returned " + cudaResultName(int(r))
		return d
	}
	if r := f.deviceGetAttribute(&minor, cuDeviceAttributeComputeCapabilityMinor, dev); r != 0 {
		d.Error = "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR) returned " + cudaResultName(int(r))
		return d
	}
	d.CCMajor, d.CCMinor = int(major), int(minor)
	if f.deviceGetName != nil {
		buf := make([]byte, cuNameBufferSize)
		if r := f.deviceGetName(&buf[0], int32(len(buf)), dev); r == 0 {
			d.Name = cString(buf)
		}
	}
	if f.deviceGetPCIBusID != nil {
		buf := make([]byte, cuBusIDBufferSize)
		if r := f.deviceGetPCIBusID(&buf[0], int32(len(buf)), dev); r == 0 {
			d.PCIBusID = cString(buf)
		}
	}
	if d.CCMajor <= 0 {
		d.Error = fmt.Sprintf("compute capability %d.%d is not valid", major, minor)
	}
	return d
}
