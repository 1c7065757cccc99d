package binfmt

import (
	"bytes"
	"debug/pe"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakepe"
)

// TestReadVersionInfo: what the resource compiler writes is read back whole.
func TestReadVersionInfo(t *testing.T) {
	img := fakepe.DLLWithVersion(pe.IMAGE_FILE_MACHINE_ARM64, fakepe.VersionInfo{
		FileVersion: [4]uint16{6, 14, 11, 12080}, ProductVersion: [4]uint16{12, 8, 90, 0},
		Strings: map[string]string{"FileVersion": "6.14.11.12080", "ProductVersion": "12.8.90", "FileDescription": "NVIDIA CUDA Runtime, Version 12.8.90"},
	})
	vi, err := ReadVersionInfo(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	if vi.FileVersion != "6.14.11.12080" || vi.ProductVersion != "12.8.90.0" || vi.Strings["ProductVersion"] != "12.8.90" ||
		vi.Strings["FileDescription"] != "NVIDIA CUDA Runtime, Version 12.8.90" || len(vi.Strings) != 3 {
		t.Fatalf("%+v", vi)
	}
}

// FuzzReadVersionInfo: any bytes are a VS_VERSIONINFO or an error, never a panic, a hang or a
// large allocation; the seeds are a DLL with one, and its resource section alone.
func FuzzReadVersionInfo(f *testing.F) {
	img := fakepe.DLLWithVersion(pe.IMAGE_FILE_MACHINE_AMD64, fakepe.VersionInfo{
		FileVersion: [4]uint16{6, 14, 11, 12080}, ProductVersion: [4]uint16{6, 14, 11, 12080},
		Strings: map[string]string{"CompanyName": "NVIDIA Corporation", "FileVersion": "6.14.11.12080", "ProductVersion": "6.14.11.12080"},
	})
	f.Add(img)
	f.Add(img[0x200:])
	f.Add(fakepe.File(pe.IMAGE_FILE_MACHINE_AMD64, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		ReadVersionInfo(bytes.NewReader(data))
		if len(data) >= 4 { // the resource section and the VS_VERSIONINFO parsers alone
			versionResource(data, uint32(data[0]), 0x1000)
			parseVersionInfo(data)
		}
	})
}
