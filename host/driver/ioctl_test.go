package driver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"
)

func Test_iowr(t *testing.T) {
	tests := []struct {
		name   string
		goarch string
		nr     byte
		size   int
		want   uintptr
		err    bool
	}{
		// The number DESIGN.md and every NVIDIA client use: _IOWR('F', 0xD2, 72).
		{name: "version amd64", goarch: "amd64", nr: nvEscCheckVersionStr, size: 72, want: 0xC04846D2},
		{name: "version arm64", goarch: "arm64", nr: nvEscCheckVersionStr, size: 72, want: 0xC04846D2},
		{name: "version ppc64le", goarch: "ppc64le", nr: nvEscCheckVersionStr, size: 72, want: 0xC04846D2},
		{name: "card info 32 entries", goarch: "amd64", nr: nvEscCardInfo, size: 32 * 72, want: 0xC90046C8},
		{name: "size field full amd64", goarch: "amd64", nr: nvEscCardInfo, size: 1 << 14, err: true},
		{name: "size field full ppc64le", goarch: "ppc64le", nr: nvEscCardInfo, size: 1 << 13, err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := iowr(tc.goarch, nvIoctlMagic, tc.nr, tc.size)
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("iowr = %#x, %v; want %#x (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
	if nvEscCheckVersionStr != 0xD2 || nvEscCardInfo != 200 {
		t.Fatalf("escape numbers %#x %d", nvEscCheckVersionStr, nvEscCardInfo)
	}
	if got := maxCardInfoEntries("amd64"); got != 227 {
		t.Errorf("amd64 fits %d card-info entries, want 227", got)
	}
	if got := maxCardInfoEntries("ppc64le"); got != 113 {
		t.Errorf("ppc64le fits %d card-info entries, want 113", got)
	}
}

// Test_structLayouts pins the Go mirrors of the C structs to the byte offsets of nv-ioctl.h and nvml.h.
func Test_structLayouts(t *testing.T) {
	var v rmAPIVersion
	var ci cardInfo
	var pci nvmlPciInfo
	tests := []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(nv_ioctl_rm_api_version_t)", unsafe.Sizeof(v), 72},
		{"rm_api_version.reply", unsafe.Offsetof(v.Reply), 4},
		{"rm_api_version.versionString", unsafe.Offsetof(v.VersionString), 8},
		{"sizeof(nv_ioctl_card_info_t)", unsafe.Sizeof(ci), 72},
		{"binary.Size(cardInfo)", uintptr(binary.Size(ci)), 72},
		{"card_info.pci_info.domain", unsafe.Offsetof(ci.Domain), 4},
		{"card_info.pci_info.bus", unsafe.Offsetof(ci.Bus), 8},
		{"card_info.pci_info.slot", unsafe.Offsetof(ci.Slot), 9},
		{"card_info.pci_info.vendor_id", unsafe.Offsetof(ci.VendorID), 12},
		{"card_info.pci_info.device_id", unsafe.Offsetof(ci.DeviceID), 14},
		{"card_info.gpu_id", unsafe.Offsetof(ci.GPUID), 16},
		{"card_info.interrupt_line", unsafe.Offsetof(ci.InterruptLine), 20},
		{"card_info.reg_address", unsafe.Offsetof(ci.RegAddress), 24},
		{"card_info.fb_size", unsafe.Offsetof(ci.FBSize), 48},
		{"card_info.minor_number", unsafe.Offsetof(ci.MinorNumber), 56},
		{"card_info.dev_name", unsafe.Offsetof(ci.DevName), 60},
		{"sizeof(nvmlPciInfo_t)", unsafe.Sizeof(pci), 68},
		{"nvmlPciInfo.domain", unsafe.Offsetof(pci.Domain), 16},
		{"nvmlPciInfo.pciDeviceId", unsafe.Offsetof(pci.PCIDeviceID), 28},
		{"nvmlPciInfo.busId", unsafe.Offsetof(pci.BusID), 36},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

func Test_versionFromReply(t *testing.T) {
	reply := func(r uint32, s string) rmAPIVersion {
		v := rmAPIVersion{Cmd: rmAPIVersionCmdQuery, Reply: r}
		copy(v.VersionString[:], s)
		return v
	}
	full := reply(1, "")
	for i := range full.VersionString {
		full.VersionString[i] = '9'
	}
	tests := []struct {
		name string
		in   rmAPIVersion
		want string
		err  error
		has  string
	}{
		{name: "550", in: reply(1, "550.144.03"), want: "550.144.03"},
		{name: "two components", in: reply(1, "580.142"), want: "580.142"},
		{name: "pre-530 override answer", in: reply(1, ""), err: errEmptyVersionReply},
		{name: "unrecognized", in: reply(0, "550.144.03"), has: "replied 0"},
		{name: "garbage", in: reply(1, "hello"), has: `"hello"`},
		{name: "no terminator", in: full, has: "not a driver version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := versionFromReply(tc.in)
			switch {
			case tc.err != nil && !errors.Is(err, tc.err):
				t.Fatalf("error %v, want %v", err, tc.err)
			case tc.has != "" && (err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.has))):
				t.Fatalf("error %v, want one containing %q", err, tc.has)
			case got != tc.want:
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func Test_decodeCardInfo(t *testing.T) {
	var buf bytes.Buffer
	for _, ci := range []cardInfo{
		{Valid: 1, Domain: 0, Bus: 0x65, Slot: 0, VendorID: 0x10de, DeviceID: 0x2330, GPUID: 0x6500, MinorNumber: 0},
		{Valid: 1, Domain: 0x10000, Bus: 0x01, Slot: 0x1f, Function: 0, VendorID: 0x10de, DeviceID: 0x2204},
		{}, // unused entries are zero
		{},
	} {
		if err := binary.Write(&buf, binary.NativeEndian, ci); err != nil {
			t.Fatal(err)
		}
	}
	got, err := decodeCardInfo(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []gpuObs{
		{index: -1, busID: "0000:65:00.0", deviceID: "0x2330"},
		{index: -1, busID: "10000:01:1f.0", deviceID: "0x2204"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, err := decodeCardInfo(make([]byte, 71)); err == nil {
		t.Fatal("a 71-byte buffer decoded")
	}
}

func FuzzDecodeCardInfo(f *testing.F) {
	f.Add(make([]byte, 72))
	f.Fuzz(func(t *testing.T, data []byte) {
		gpus, err := decodeCardInfo(data)
		if err != nil {
			return
		}
		for _, g := range gpus {
			if canonicalBusID(g.busID) != g.busID {
				t.Fatalf("bus id %q", g.busID)
			}
		}
	})
}
