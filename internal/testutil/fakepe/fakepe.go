// Package fakepe makes the headers of Windows PE images for tests: enough for debug/pe and the
// host's machine and DLL checks, with no code in them.
package fakepe

import (
	"bytes"
	"debug/pe"
	"encoding/binary"
)

// File returns the headers of a PE image for machine: an MZ stub pointing at the PE signature, a
// COFF header without sections, and a PE32+ optional header with 16 empty data directories. That is
// all debug/pe reads and all the host's checkPE looks at.
func File(machine uint16, dll bool) []byte {
	var b bytes.Buffer
	dos := make([]byte, 0x40)
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], 0x40) // e_lfanew
	b.Write(dos)
	b.WriteString("PE\x00\x00")
	chars := uint16(pe.IMAGE_FILE_EXECUTABLE_IMAGE | pe.IMAGE_FILE_LARGE_ADDRESS_AWARE)
	if dll {
		chars |= pe.IMAGE_FILE_DLL
	}
	opt := pe.OptionalHeader64{Magic: 0x20b, SectionAlignment: 0x1000, FileAlignment: 0x200, MajorSubsystemVersion: 6, NumberOfRvaAndSizes: 16}
	binary.Write(&b, binary.LittleEndian, pe.FileHeader{Machine: machine, SizeOfOptionalHeader: uint16(binary.Size(opt)), Characteristics: chars})
	binary.Write(&b, binary.LittleEndian, opt)
	return b.Bytes()
}
