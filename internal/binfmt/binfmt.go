// Package binfmt reads the executable formats pathfinder checks before it takes a file: ELF (what
// glibc's loader checks of a header, an object's dynamic section, the versions it defines) and PE
// (its machine, whether it is a DLL, its VS_VERSIONINFO). It reads files, never loads them, and it
// alone imports debug/elf and debug/pe.
package binfmt

import (
	"debug/elf"
	"debug/pe"
)

// What an ELF file is built for, in debug/elf's values and spelling (EM_X86_64, ELFCLASS64, …).
type (
	Class   = elf.Class
	Data    = elf.Data
	Machine = elf.Machine
	Type    = elf.Type
)

const (
	ClassNone      = elf.ELFCLASSNONE
	Class64        = elf.ELFCLASS64
	LittleEndian   = elf.ELFDATA2LSB
	MachineNone    = elf.EM_NONE
	MachineX86_64  = elf.EM_X86_64
	MachineAArch64 = elf.EM_AARCH64
	TypeExec       = elf.ET_EXEC
	TypeDyn        = elf.ET_DYN
)

// machines are the ELF and PE machines of the Go architectures (GOARCH's spelling) pathfinder
// knows; a PE machine of 0 is none.
var machines = map[string]struct {
	elf Machine
	pe  uint16
}{
	"amd64":   {elf.EM_X86_64, pe.IMAGE_FILE_MACHINE_AMD64},
	"arm64":   {elf.EM_AARCH64, pe.IMAGE_FILE_MACHINE_ARM64},
	"ppc64le": {elf.EM_PPC64, 0},
	"riscv64": {elf.EM_RISCV, 0},
}

// MachineOf is the ELF machine of Go's architecture goarch; MachineNone for one pathfinder does
// not know.
func MachineOf(goarch string) Machine { return machines[goarch].elf }

// PEMachineOf is the PE machine of Go's architecture goarch; 0 for one pathfinder knows none of.
func PEMachineOf(goarch string) uint16 { return machines[goarch].pe }
