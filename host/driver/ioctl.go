package driver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The control device's ioctls, from open-gpu-kernel-modules kernel-open/common/inc/nv-ioctl-numbers.h
// and nv-ioctl.h. They need no RM client, so they answer in microseconds and never wake a GPU.
const (
	nvIoctlMagic                = 'F'
	nvIoctlBase                 = 200
	nvEscCardInfo               = nvIoctlBase + 0  // NV_ESC_CARD_INFO
	nvEscCheckVersionStr        = nvIoctlBase + 10 // NV_ESC_CHECK_VERSION_STR
	rmAPIVersionCmdQuery        = '2'              // NV_RM_API_VERSION_CMD_QUERY (≥ 530; was _OVERRIDE, a no-op, before)
	rmAPIVersionReplyRecognized = 1                // NV_RM_API_VERSION_REPLY_RECOGNIZED
	rmAPIVersionStringLength    = 64
	cardInfoSize                = 72
	// The first card-info buffer holds 32 GPUs (NV_MAX_DEVICES in older headers); the driver answers
	// EINVAL when it has more, and the buffer doubles up to what the ioctl number's size field can carry.
	cardInfoFirstEntries = 32
)

// rmAPIVersion is nv_ioctl_rm_api_version_t: 72 bytes.
type rmAPIVersion struct {
	Cmd           uint32
	Reply         uint32
	VersionString [rmAPIVersionStringLength]byte
}

// cardInfo is nv_ioctl_card_info_t (72 bytes, 8-byte aligned); the blank fields are the C padding.
type cardInfo struct {
	Valid         uint8 // NvBool; older drivers had a u32 flags field whose low byte is the same "present" bit
	_             [3]byte
	Domain        uint32 // nv_pci_info_t: domain, bus, slot, function, vendor_id, device_id
	Bus           uint8
	Slot          uint8
	Function      uint8
	_             uint8
	VendorID      uint16
	DeviceID      uint16
	GPUID         uint32
	InterruptLine uint16
	_             [2]byte
	RegAddress    uint64
	RegSize       uint64
	FBAddress     uint64
	FBSize        uint64
	MinorNumber   uint32
	DevName       [10]byte
	_             [2]byte
}

// iowr computes _IOWR(typ, nr, size) for goarch. Most Linux architectures use the asm-generic layout
// (14 size bits, direction read|write = 3 at bit 30); powerpc, mips and sparc use 13 size bits and a
// 3-bit direction field where read|write = 6 at bit 29 (arch/*/include/uapi/asm/ioctl.h).
func iowr(goarch string, typ, nr byte, size int) (uintptr, error) {
	sizeBits, dirShift, readWrite := iocSizeBits(goarch), uint(30), uintptr(3)
	if sizeBits == 13 {
		dirShift, readWrite = 29, 6
	}
	if size < 0 || size >= 1<<sizeBits {
		return 0, fmt.Errorf("ioctl argument of %d bytes does not fit the %d-bit size field", size, sizeBits)
	}
	return readWrite<<dirShift | uintptr(size)<<16 | uintptr(typ)<<8 | uintptr(nr), nil
}

func iocSizeBits(goarch string) uint {
	switch goarch {
	case "ppc64", "ppc64le", "mips", "mipsle", "mips64", "mips64le", "sparc64":
		return 13
	}
	return 14
}

// maxCardInfoEntries is how many card-info entries the size field of an ioctl number can describe.
func maxCardInfoEntries(goarch string) int {
	return (1<<iocSizeBits(goarch) - 1) / cardInfoSize
}

// versionFromReply turns the version ioctl's answer into a version, or says why it cannot.
func versionFromReply(v rmAPIVersion) (string, error) {
	if v.Reply != rmAPIVersionReplyRecognized {
		return "", fmt.Errorf("NV_ESC_CHECK_VERSION_STR replied %d, not %d (recognized)", v.Reply, rmAPIVersionReplyRecognized)
	}
	s := string(v.VersionString[:])
	if i := bytes.IndexByte(v.VersionString[:], 0); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		// Before 530 the command '2' meant NV_RM_API_VERSION_CMD_OVERRIDE: accepted, answered with
		// nothing. Asking the strict way would log an error in the kernel log, so the files answer instead.
		return "", errEmptyVersionReply
	}
	if !validDriverVersion(s) {
		return "", fmt.Errorf("NV_ESC_CHECK_VERSION_STR answered %q, not a driver version", s)
	}
	return s, nil
}

var errEmptyVersionReply = errors.New("the driver answered the version query with an empty string (drivers before 530 do)")

// decodeCardInfo reads the card-info entries the driver filled in; unused entries are all zero.
func decodeCardInfo(buf []byte) ([]gpuObs, error) {
	if len(buf)%cardInfoSize != 0 {
		return nil, fmt.Errorf("card info buffer of %d bytes is not a multiple of %d", len(buf), cardInfoSize)
	}
	var gpus []gpuObs
	for off := 0; off < len(buf); off += cardInfoSize {
		var ci cardInfo
		if err := binary.Read(bytes.NewReader(buf[off:off+cardInfoSize]), binary.NativeEndian, &ci); err != nil {
			return nil, fmt.Errorf("card info: %w", err)
		}
		if ci.Valid == 0 {
			continue
		}
		// A slot above 31 is no PCI address: an entry the driver did not fill the way this layout says.
		g := gpuObs{index: -1, busID: canonicalBusID(fmt.Sprintf("%x:%x:%x.%x", ci.Domain, ci.Bus, ci.Slot, ci.Function))}
		if g.busID == "" {
			continue
		}
		if ci.VendorID == nvidiaVendorID {
			g.deviceID = fmt.Sprintf("0x%04x", ci.DeviceID)
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}
