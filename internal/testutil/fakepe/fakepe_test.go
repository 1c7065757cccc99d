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
