package driver

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pathfinder-dev/pathfinder/internal/report"
)

// nvmlPciInfo is nvmlPciInfo_t from nvml.h (68 bytes), which nvmlDeviceGetPciInfo_v3 fills.
type nvmlPciInfo struct {
	BusIDLegacy    [16]byte // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
	Domain         uint32
	Bus            uint32
	Device         uint32
	PCIDeviceID    uint32 // device id << 16 | vendor id
	PCISubSystemID uint32
	BusID          [32]byte // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE, "00000000:65:00.0"
}

// Buffer sizes from nvml.h, large enough for every answer.
const (
	nvmlDriverVersionBufferSize = 80 // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
	nvmlDeviceNameBufferSize    = 96 // NVML_DEVICE_NAME_V2_BUFFER_SIZE
	nvmlDeviceUUIDBufferSize    = 96 // NVML_DEVICE_UUID_V2_BUFFER_SIZE
)

// nvmlReturnNames are the nvmlReturn_t values worth naming in a report.
var nvmlReturnNames = sync.OnceValue(func() map[int32]string {
	return map[int32]string{
		1: "NVML_ERROR_UNINITIALIZED", 2: "NVML_ERROR_INVALID_ARGUMENT", 3: "NVML_ERROR_NOT_SUPPORTED",
		4: "NVML_ERROR_NO_PERMISSION", 6: "NVML_ERROR_NOT_FOUND", 7: "NVML_ERROR_INSUFFICIENT_SIZE",
		9: "NVML_ERROR_DRIVER_NOT_LOADED", 10: "NVML_ERROR_TIMEOUT", 12: "NVML_ERROR_LIBRARY_NOT_FOUND",
		13: "NVML_ERROR_FUNCTION_NOT_FOUND", 14: "NVML_ERROR_CORRUPTED_INFOROM", 15: "NVML_ERROR_GPU_IS_LOST",
		16: "NVML_ERROR_RESET_REQUIRED", 17: "NVML_ERROR_OPERATING_SYSTEM", 18: "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
		20: "NVML_ERROR_MEMORY", 999: "NVML_ERROR_UNKNOWN",
	}
})

// nvmlSignals are the nvmlInit_v2 failures that tell the driver's state.
var nvmlSignals = sync.OnceValue(func() map[int32]driverSignal { return map[int32]driverSignal{9: signalNoDriver, 18: signalMismatch} })

func nvmlReturnName(r int32) string {
	if n, ok := nvmlReturnNames()[r]; ok {
		return fmt.Sprintf("%s (%d)", n, r)
	}
	return fmt.Sprintf("nvmlReturn_t %d", r)
}

// cString reads a NUL-terminated C string out of a buffer the library filled.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// libraryCandidates is where a library is looked for: the override variable alone when it is set,
// else the soname (the dynamic loader's search) and, on WSL2 only, WSL's library folder under Root,
// which the loader only searches when /etc/ld.so.conf.d names it.
func libraryCandidates(p *prober, overrideEnv, soname string) (libs []string, override bool) {
	if v := p.overrideFile(overrideEnv); v != "" {
		return []string{v}, true
	}
	if p.setup == SetupWSL2 {
		return []string{soname, p.path(wslLibDir + "/" + soname)}, false
	}
	return []string{soname}, false
}

// overrideFile is the file the variable names instead of the driver's library, or "" when unset or
// refused: a relative path with a directory in it (./libcuda.so.1) would be opened against the
// working directory, so it is refused and named in Report.Ignored. A bare file name is the
// loader's to find, as dlopen searches for it.
func (p *prober) overrideFile(env string) string {
	v := p.getenv(env)
	if v == "" || filepath.IsAbs(v) || !strings.ContainsRune(v, '/') {
		return v
	}
	if !slices.ContainsFunc(p.ignored, func(in report.Ignored) bool { return in.Name == env }) {
		p.ignored = append(p.ignored, report.RelativePath(env, v))
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
