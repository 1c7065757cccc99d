package loadermodel

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
)

// verdict is what the loader does with a file it opened.
type verdict int

const (
	missing verdict = iota - 1 // no file to open
	usable
	skipped // the loader closes it and searches on (wrong class or machine)
	fatal   // dlopen fails here, no further search
)

// libcABIMax is glibc's LIBC_ABI_MAX (libc-abis: DEFAULT, UNIQUE, IFUNC, ABSOLUTE, ...); newer
// glibc may accept more, which only matters for a file with EI_ABIVERSION above 3.
const libcABIMax = 4

// verifyELF models glibc's open_verify (elf/dl-load.c) on the ELF header, in its order: a short
// file, a bad magic or a bad identification byte is fatal; a file of the other class (a 32-bit
// library on a 64-bit system) or of another machine is skipped. It reads the header only; the
// program headers (PT_NOTE ABI tags, which glibc 2.36 and later ignore anyway) are not modeled.
func verifyELF(r io.Reader, t target) (verdict, string) {
	hdrSize := 64
	if t.class == elf.ELFCLASS32 {
		hdrSize = 52
	}
	buf := make([]byte, hdrSize)
	n, err := io.ReadFull(r, buf)
	if n < hdrSize {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fatal, fmt.Sprintf("file too short (%d bytes, an ELF header is %d)", n, hdrSize)
		}
		return fatal, "cannot read file data: " + errReason(err)
	}
	ident := buf[:elf.EI_NIDENT]
	osabi := elf.OSABI(ident[elf.EI_OSABI])
	abiVersion := ident[elf.EI_ABIVERSION]
	switch {
	case string(ident[:4]) != elf.ELFMAG:
		return fatal, fmt.Sprintf("invalid ELF header (magic % x)", ident[:4])
	case elf.Class(ident[elf.EI_CLASS]) != t.class:
		return skipped, fmt.Sprintf("wrong ELF class: %v, this process is %v", elf.Class(ident[elf.EI_CLASS]), t.class)
	case elf.Data(ident[elf.EI_DATA]) != t.data:
		return fatal, fmt.Sprintf("ELF file data encoding %v, this process is %v", elf.Data(ident[elf.EI_DATA]), t.data)
	case elf.Version(ident[elf.EI_VERSION]) != elf.EV_CURRENT:
		return fatal, "ELF file version ident does not match current one"
	case osabi != elf.ELFOSABI_NONE && osabi != elf.ELFOSABI_LINUX:
		return fatal, fmt.Sprintf("ELF file OS ABI invalid (%v)", osabi)
	case abiVersion != 0 && (osabi != elf.ELFOSABI_LINUX || abiVersion >= libcABIMax):
		return fatal, fmt.Sprintf("ELF file ABI version invalid (%d)", abiVersion)
	}
	for _, b := range ident[elf.EI_PAD:] {
		if b != 0 {
			return fatal, "nonzero padding in e_ident"
		}
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if t.data == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	typ := elf.Type(order.Uint16(buf[16:]))
	machine := elf.Machine(order.Uint16(buf[18:]))
	version := elf.Version(order.Uint32(buf[20:]))
	phentsize, wantPhentsize := order.Uint16(buf[54:]), uint16(56)
	if t.class == elf.ELFCLASS32 {
		phentsize, wantPhentsize = order.Uint16(buf[42:]), 32
	}
	switch {
	case version != elf.EV_CURRENT:
		return fatal, "ELF file version does not match current one"
	case machine != t.machine:
		return skipped, fmt.Sprintf("wrong machine: %v, this process is %v", machine, t.machine)
	case typ != elf.ET_DYN && typ != elf.ET_EXEC:
		return fatal, fmt.Sprintf("only ET_DYN and ET_EXEC can be loaded, this is %v", typ)
	case phentsize != wantPhentsize:
		return fatal, fmt.Sprintf("ELF file's phentsize %d is not the expected %d", phentsize, wantPhentsize)
	}
	return usable, ""
}
