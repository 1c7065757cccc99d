package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/ebitengine/purego"

	"github.com/pathfinder-dev/pathfinder/host"
)

// CUdevice_attribute values (cuda.h).
const (
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
)

// askCUDA loads libcuda as a Go program would (host.Load) and asks it. It runs in its own process,
// started by the script: cuInit in a process breaks its later forks.
func askCUDA(ctx context.Context) cudaAnswer {
	res := cudaAnswer{Devices: []cudaDevice{}}
	lib, err := host.Load(ctx, "cuda")
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Library, res.FoundVia = lib.Path, lib.FoundVia
	var (
		cuInit               func(flags uint32) int32
		cuDriverGetVersion   func(v *int32) int32
		cuDeviceGetCount     func(n *int32) int32
		cuDeviceGet          func(dev *int32, ordinal int32) int32
		cuDeviceGetName      func(buf *byte, n int32, dev int32) int32
		cuDeviceGetPCIBusId  func(buf *byte, n int32, dev int32) int32
		cuDeviceGetAttribute func(v *int32, attr int32, dev int32) int32
		cuDeviceGetUuid      func(uuid *[16]byte, dev int32) int32
	)
	for name, fn := range map[string]any{"cuInit": &cuInit, "cuDriverGetVersion": &cuDriverGetVersion, "cuDeviceGetCount": &cuDeviceGetCount,
		"cuDeviceGet": &cuDeviceGet, "cuDeviceGetName": &cuDeviceGetName, "cuDeviceGetPCIBusId": &cuDeviceGetPCIBusId, "cuDeviceGetAttribute": &cuDeviceGetAttribute} {
		if _, err := purego.Dlsym(lib.Handle, name); err != nil {
			res.Error = fmt.Sprintf("%s lacks %s", lib.Path, name)
			return res
		}
		purego.RegisterLibFunc(fn, lib.Handle, name)
	}
	for _, name := range []string{"cuDeviceGetUuid_v2", "cuDeviceGetUuid"} {
		if _, err := purego.Dlsym(lib.Handle, name); err == nil {
			purego.RegisterLibFunc(&cuDeviceGetUuid, lib.Handle, name)
			break
		}
	}
	var v int32
	if rc := cuDriverGetVersion(&v); rc != 0 {
		res.Error = fmt.Sprintf("cuDriverGetVersion returned CUresult %d", rc)
		return res
	}
	res.DriverVersion = int(v)
	if rc := cuInit(0); rc != 0 {
		res.Error = fmt.Sprintf("cuInit returned CUresult %d", rc)
		return res
	}
	var n int32
	if rc := cuDeviceGetCount(&n); rc != 0 {
		res.Error = fmt.Sprintf("cuDeviceGetCount returned CUresult %d", rc)
		return res
	}
	res.DeviceCount = int(n)
	for i := int32(0); i < n; i++ {
		d := cudaDevice{Ordinal: int(i)}
		var dev, major, minor int32
		buf := make([]byte, 256)
		switch rc := cuDeviceGet(&dev, i); {
		case rc != 0:
			d.Error = fmt.Sprintf("cuDeviceGet returned CUresult %d", rc)
		case cuDeviceGetAttribute(&major, attrComputeCapabilityMajor, dev) != 0 || cuDeviceGetAttribute(&minor, attrComputeCapabilityMinor, dev) != 0:
			d.Error = "cuDeviceGetAttribute failed for the compute capability"
		default:
			d.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
			if cuDeviceGetName(&buf[0], int32(len(buf)), dev) == 0 {
				d.Name = cString(buf)
			}
			if cuDeviceGetPCIBusId(&buf[0], int32(len(buf)), dev) == 0 {
				d.PCIBusID = cString(buf)
			}
			var u [16]byte
			if cuDeviceGetUuid != nil && cuDeviceGetUuid(&u, dev) == 0 {
				d.UUID = fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
			}
		}
		res.Devices = append(res.Devices, d)
	}
	return res
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
