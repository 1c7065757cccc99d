package fakepe

import (
	"bytes"
	"debug/pe"
	"testing"
)

func TestFile(t *testing.T) {
	for _, tt := range []struct {
		machine uint16
		dll     bool
	}{{pe.IMAGE_FILE_MACHINE_AMD64, true}, {pe.IMAGE_FILE_MACHINE_ARM64, true}, {pe.IMAGE_FILE_MACHINE_ARM64, false}} {
		f, err := pe.NewFile(bytes.NewReader(File(tt.machine, tt.dll)))
		if err != nil {
			t.Fatal(err)
		}
		if f.Machine != tt.machine || (f.Characteristics&pe.IMAGE_FILE_DLL != 0) != tt.dll {
			t.Errorf("machine %#x dll %v: parsed machine %#x characteristics %#x", tt.machine, tt.dll, f.Machine, f.Characteristics)
		}
		if _, ok := f.OptionalHeader.(*pe.OptionalHeader64); !ok {
			t.Errorf("optional header %T, want PE32+", f.OptionalHeader)
		}
	}
}

// TestDLLWithVersion: the image is a DLL debug/pe reads, whose resource directory is its one section.
func TestDLLWithVersion(t *testing.T) {
	b := DLLWithVersion(pe.IMAGE_FILE_MACHINE_AMD64, VersionInfo{FileVersion: [4]uint16{6, 14, 11, 12080}, Strings: map[string]string{"FileVersion": "6.14.11.12080"}})
	f, err := pe.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".rsrc")
	dir := f.OptionalHeader.(*pe.OptionalHeader64).DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_RESOURCE]
	if s == nil || len(f.Sections) != 1 || dir.VirtualAddress != s.VirtualAddress || dir.Size != s.VirtualSize {
		t.Fatalf("sections %+v, resource directory %+v", f.Sections, dir)
	}
	data, err := s.Data()
	if err != nil || !bytes.Contains(data, []byte("V\x00S\x00_\x00V\x00E\x00R\x00S\x00I\x00O\x00N\x00_\x00I\x00N\x00F\x00O\x00")) {
		t.Fatalf("the resource section (%v) holds no VS_VERSION_INFO", err)
	}
}
