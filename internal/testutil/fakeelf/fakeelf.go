// Package fakeelf makes the headers of ELF objects for tests: enough for the loader's header checks
// (binfmt.VerifyHeader) and for debug/elf, with no content in them.
package fakeelf

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

// Header is a little-endian ELF header of class, machine and type with no content, padded to 128
// bytes so that it is never "too short".
func Header(class elf.Class, machine elf.Machine, typ elf.Type) []byte {
	var b bytes.Buffer
	ident := [elf.EI_NIDENT]byte{0x7f, 'E', 'L', 'F', byte(class), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)}
	if class == elf.ELFCLASS32 {
		binary.Write(&b, binary.LittleEndian, elf.Header32{Ident: ident, Type: uint16(typ), Machine: uint16(machine),
			Version: uint32(elf.EV_CURRENT), Ehsize: 52, Phentsize: 32})
	} else {
		binary.Write(&b, binary.LittleEndian, elf.Header64{Ident: ident, Type: uint16(typ), Machine: uint16(machine),
			Version: uint32(elf.EV_CURRENT), Ehsize: 64, Phentsize: 56})
	}
	b.Write(make([]byte, 128-b.Len()))
	return b.Bytes()
}
