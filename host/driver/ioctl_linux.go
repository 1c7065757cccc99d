package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pathfinder-dev/pathfinder/internal/english"
)

// probeIoctl asks the control device for the driver version (NV_ESC_CHECK_VERSION_STR) and the GPU
// list (NV_ESC_CARD_INFO): what libcuda and nvidia-smi ask first, without loading either.
func probeIoctl(p *prober) methodResult {
	path := p.path("/dev/nvidiactl")
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return unavailable("no /dev/nvidiactl")
	}
	if err != nil {
		return failed("%v", err)
	}
	mode := fi.Mode()
	if !mode.IsRegular() && mode&fs.ModeCharDevice == 0 {
		// Opening a FIFO would block; nothing but the driver's character device can answer anyway.
		return failed("%s is not a character device (mode %v)", path, mode)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return failed("open %s: %v", path, err)
	}
	defer unix.Close(fd)

	call := sysIoctl(fd)
	version, verr := queryVersion(call)
	if errors.Is(verr, unix.ENOTTY) {
		hint := ""
		if mode.IsRegular() {
			hint = " (it is a regular file, not the driver's device node)"
		}
		return failed("%s does not answer the NVIDIA ioctls: %v%s", path, unix.ENOTTY, hint)
	}
	gpus, cerr := queryCardInfo(call)

	obs := &observation{driverVersion: version, gpus: gpus}
	var parts []string
	switch {
	case verr == nil:
		parts = append(parts, "NV_ESC_CHECK_VERSION_STR: "+version)
	case errors.Is(verr, errEmptyVersionReply):
		parts = append(parts, "NV_ESC_CHECK_VERSION_STR: empty answer (a driver before 530; the version comes from /sys or /proc)")
	default:
		parts = append(parts, verr.Error())
	}
	if cerr != nil {
		parts = append(parts, cerr.Error())
	} else {
		parts = append(parts, "NV_ESC_CARD_INFO: "+english.Plural(len(gpus), "GPU"))
	}
	if verr != nil && cerr != nil {
		return failed("%s", strings.Join(parts, "; "))
	}
	return ok(strings.Join(parts, "; "), obs)
}

// ioctlFunc issues one ioctl on the control device; tests replace it to play the driver.
type ioctlFunc func(req uintptr, arg unsafe.Pointer) unix.Errno

func sysIoctl(fd int) ioctlFunc {
	return func(req uintptr, arg unsafe.Pointer) unix.Errno {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		return errno
	}
}

func queryVersion(call ioctlFunc) (string, error) {
	v := rmAPIVersion{Cmd: rmAPIVersionCmdQuery}
	req, err := iowr(runtime.GOARCH, nvIoctlMagic, nvEscCheckVersionStr, int(unsafe.Sizeof(v)))
	if err != nil {
		return "", err
	}
	if errno := call(req, unsafe.Pointer(&v)); errno != 0 {
		return "", fmt.Errorf("NV_ESC_CHECK_VERSION_STR: %w", errno)
	}
	return versionFromReply(v)
}

func queryCardInfo(call ioctlFunc) ([]gpuObs, error) {
	limit := maxCardInfoEntries(runtime.GOARCH)
	for n := cardInfoFirstEntries; ; n = min(2*n, limit) {
		buf := make([]byte, n*cardInfoSize)
		req, err := iowr(runtime.GOARCH, nvIoctlMagic, nvEscCardInfo, len(buf))
		if err != nil {
			return nil, err
		}
		errno := call(req, unsafe.Pointer(&buf[0]))
		if errno == unix.EINVAL && n < limit {
			continue // more GPUs than entries: the driver refuses rather than truncates
		}
		if errno != 0 {
			return nil, fmt.Errorf("NV_ESC_CARD_INFO with room for %d GPUs: %w", n, errno)
		}
		return decodeCardInfo(buf)
	}
}
