package binfmt

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"syscall"
)

// Verdict is what glibc's loader does with a file it opened, judging by its ELF header.
type Verdict int

const (
	Usable  Verdict = iota
	Skipped         // the loader closes it and searches on (wrong class or machine)
	Fatal           // dlopen fails here, no further search
)

// Arch is what a process's ELF objects are: their class, byte order and machine.
type Arch struct {
	Class   Class
	Data    Data
	Machine Machine
}

// libcABIMax is glibc's LIBC_ABI_MAX (libc-abis: DEFAULT, UNIQUE, IFUNC, ABSOLUTE, ...); newer
// glibc may accept more, which only matters for a file with EI_ABIVERSION above 3.
const libcABIMax = 4

// VerifyHeader models glibc's open_verify (elf/dl-load.c) on the ELF header, in its order: a short
// file, a bad magic or a bad identification byte is fatal; a file of the other class (a 32-bit
// library on a 64-bit system) or of another machine is skipped. It reads the header only; the
// program headers (PT_NOTE ABI tags, which glibc 2.36 and later ignore anyway) are not modeled.
func VerifyHeader(r io.Reader, t Arch) (Verdict, string) {
	hdrSize := 64
	if t.Class == elf.ELFCLASS32 {
		hdrSize = 52
	}
	buf := make([]byte, hdrSize)
	n, err := io.ReadFull(r, buf)
	if n < hdrSize {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return Fatal, fmt.Sprintf("file too short (%d bytes, an ELF header is %d)", n, hdrSize)
		}
		var errno syscall.Errno // the loader's words are strerror's: "Is a directory"
		if errors.As(err, &errno) {
			err = errno
		}
		return Fatal, "cannot read file data: " + err.Error()
	}
	ident := buf[:elf.EI_NIDENT]
	osabi := elf.OSABI(ident[elf.EI_OSABI])
	abiVersion := ident[elf.EI_ABIVERSION]
	switch {
	case string(ident[:4]) != elf.ELFMAG:
		return Fatal, fmt.Sprintf("invalid ELF header (magic % x)", ident[:4])
	case elf.Class(ident[elf.EI_CLASS]) != t.Class:
		return Skipped, fmt.Sprintf("wrong ELF class: %v, this process is %v", elf.Class(ident[elf.EI_CLASS]), t.Class)
	case elf.Data(ident[elf.EI_DATA]) != t.Data:
		return Fatal, fmt.Sprintf("ELF file data encoding %v, this process is %v", elf.Data(ident[elf.EI_DATA]), t.Data)
	case elf.Version(ident[elf.EI_VERSION]) != elf.EV_CURRENT:
		return Fatal, "ELF file version ident does not match current one"
	case osabi != elf.ELFOSABI_NONE && osabi != elf.ELFOSABI_LINUX:
		return Fatal, fmt.Sprintf("ELF file OS ABI invalid (%v)", osabi)
	case abiVersion != 0 && (osabi != elf.ELFOSABI_LINUX || abiVersion >= libcABIMax):
		return Fatal, fmt.Sprintf("ELF file ABI version invalid (%d)", abiVersion)
	}
	for _, b := range ident[elf.EI_PAD:] {
		if b != 0 {
			return Fatal, "nonzero padding in e_ident"
		}
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if t.Data == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	typ := elf.Type(order.Uint16(buf[16:]))
	machine := elf.Machine(order.Uint16(buf[18:]))
	version := elf.Version(order.Uint32(buf[20:]))
	phentsize, wantPhentsize := order.Uint16(buf[54:]), uint16(56)
	if t.Class == elf.ELFCLASS32 {
		phentsize, wantPhentsize = order.Uint16(buf[42:]), 32
	}
	switch {
	case version != elf.EV_CURRENT:
		return Fatal, "ELF file version does not match current one"
	case machine != t.Machine:
		return Skipped, fmt.Sprintf("wrong machine: %v, this process is %v", machine, t.Machine)
	case typ != elf.ET_DYN && typ != elf.ET_EXEC:
		return Fatal, fmt.Sprintf("only ET_DYN and ET_EXEC can be loaded, this is %v", typ)
	case phentsize != wantPhentsize:
		return Fatal, fmt.Sprintf("ELF file's phentsize %d is not the expected %d", phentsize, wantPhentsize)
	}
	return Usable, ""
}
