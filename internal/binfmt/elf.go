package binfmt

import (
	"debug/elf"
	"errors"
	"io"
	"strings"
)

// ELF is an ELF object open for reading: what its header says, and on demand its dynamic section.
type ELF struct {
	Class   Class
	Machine Machine
	Type    Type
	f       *elf.File
}

// NewELF reads the header of the ELF object r; its errors are debug/elf's.
func NewELF(r io.ReaderAt) (*ELF, error) { return newELF(elf.NewFile(r)) }

// OpenELF opens the ELF object at path and reads its header, as NewELF; Close closes it.
func OpenELF(path string) (*ELF, error) { return newELF(elf.Open(path)) }

func newELF(f *elf.File, err error) (*ELF, error) {
	if err != nil {
		return nil, err
	}
	return &ELF{Class: f.Class, Machine: f.Machine, Type: f.Type, f: f}, nil
}

// Close closes the file OpenELF opened; it does nothing to NewELF's reader.
func (e *ELF) Close() error { return e.f.Close() }

// Needs is what a shared object asks of the loader besides itself, from its dynamic section.
type Needs struct {
	Soname   string              // DT_SONAME, "" when it has none
	Needed   []string            // DT_NEEDED, in order
	RPath    []string            // DT_RPATH; the loader ignores it when there is a DT_RUNPATH
	RunPath  []string            // DT_RUNPATH
	Versions map[string][]string // per needed file, the symbol versions it must define (weak ones left out)
	PIE      bool                // DF_1_PIE: a position-independent executable, which dlopen refuses
}

// Needs reads what the object needs. An object without a dynamic section needs nothing.
func (e *ELF) Needs() (Needs, error) {
	f := e.f
	var n Needs
	if f.Section(".dynamic") == nil && f.SectionByType(elf.SHT_DYNAMIC) == nil {
		return n, nil
	}
	var err error
	str := func(tag elf.DynTag) []string {
		v, e := f.DynString(tag)
		err = errors.Join(err, e)
		return v
	}
	if s := str(elf.DT_SONAME); len(s) > 0 {
		n.Soname = s[0]
	}
	n.Needed = str(elf.DT_NEEDED)
	for _, v := range str(elf.DT_RPATH) {
		n.RPath = append(n.RPath, strings.Split(v, ":")...)
	}
	for _, v := range str(elf.DT_RUNPATH) {
		n.RunPath = append(n.RunPath, strings.Split(v, ":")...)
	}
	if flags, e := f.DynValue(elf.DT_FLAGS_1); e == nil && len(flags) > 0 {
		n.PIE = elf.DynFlag1(flags[0])&elf.DF_1_PIE != 0
	}
	if needs, e := f.DynamicVersionNeeds(); e == nil {
		for _, need := range needs {
			for _, d := range need.Needs {
				if d.Flags&elf.VER_FLG_WEAK == 0 {
					if n.Versions == nil {
						n.Versions = map[string][]string{}
					}
					n.Versions[need.Name] = append(n.Versions[need.Name], d.Dep)
				}
			}
		}
	}
	return n, err
}

// DefinedVersions reads the names of the versions the object defines (SHT_GNU_verdef), nil when it
// defines none. debug/elf's DynamicVersions reads the whole dynamic symbol table to say the same,
// which for libc is most of the cost of a prediction.
func (e *ELF) DefinedVersions() []string {
	f := e.f
	sec := f.SectionByType(elf.SHT_GNU_VERDEF)
	if sec == nil || int(sec.Link) >= len(f.Sections) {
		return nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil
	}
	strs, err := f.Sections[sec.Link].Data()
	if err != nil {
		return nil
	}
	var names []string
	for off, n := 0, 0; off+20 <= len(data) && n < 1<<16; n++ {
		// Elf_Verdef: version, flags, ndx, cnt (u16), hash, aux, next (u32); aux -> Elf_Verdaux:
		// name, next (u32). The first aux names the version itself.
		aux := off + int(f.ByteOrder.Uint32(data[off+12:]))
		if aux+8 <= len(data) {
			if name := int(f.ByteOrder.Uint32(data[aux:])); name < len(strs) {
				end := name
				for end < len(strs) && strs[end] != 0 {
					end++
				}
				names = append(names, string(strs[name:end]))
			}
		}
		next := int(f.ByteOrder.Uint32(data[off+16:]))
		if next == 0 {
			break
		}
		off += next
	}
	return names
}
