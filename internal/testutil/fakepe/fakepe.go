// Package fakepe makes the headers of Windows PE images for tests: enough for debug/pe and the
// host's machine and DLL checks, with no code in them, and where a test asks, a version resource.
package fakepe

import (
	"bytes"
	"debug/pe"
	"encoding/binary"
	"maps"
	"slices"
	"unicode/utf16"
)

// File returns the headers of a PE image for machine: an MZ stub pointing at the PE signature, a
// COFF header without sections, and a PE32+ optional header with 16 empty data directories. That is
// all debug/pe reads and all the host's checkPE looks at.
func File(machine uint16, dll bool) []byte { return image(machine, dll, nil) }

// VersionInfo is what a DLL's VS_VERSIONINFO says: VS_FIXEDFILEINFO's file and product versions,
// and StringFileInfo's strings ("FileVersion": "6.14.11.12080").
type VersionInfo struct {
	FileVersion, ProductVersion [4]uint16
	Strings                     map[string]string
}

// DLLWithVersion returns a DLL for machine with one section, .rsrc, that holds info as its
// RT_VERSION resource, laid out as Microsoft's resource compiler lays it out.
func DLLWithVersion(machine uint16, info VersionInfo) []byte {
	return image(machine, true, resources(versionInfo(info)))
}

// Where image puts things: the PE signature after the MZ header, sections at the file alignment,
// the resource section at RVA 0x1000.
const (
	peOffset  = 0x40
	fileAlign = 0x200
	rsrcRVA   = 0x1000
)

// image is the headers of File, and after them rsrc as the .rsrc section when there is one.
func image(machine uint16, dll bool, rsrc []byte) []byte {
	var b bytes.Buffer
	dos := make([]byte, peOffset)
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], peOffset) // e_lfanew
	b.Write(dos)
	b.WriteString("PE\x00\x00")
	chars := uint16(pe.IMAGE_FILE_EXECUTABLE_IMAGE | pe.IMAGE_FILE_LARGE_ADDRESS_AWARE)
	if dll {
		chars |= pe.IMAGE_FILE_DLL
	}
	opt := pe.OptionalHeader64{Magic: 0x20b, SectionAlignment: 0x1000, FileAlignment: fileAlign, MajorSubsystemVersion: 6, NumberOfRvaAndSizes: 16}
	var sections []pe.SectionHeader32
	if rsrc != nil {
		size := uint32(len(rsrc))
		opt.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_RESOURCE] = pe.DataDirectory{VirtualAddress: rsrcRVA, Size: size}
		opt.SizeOfHeaders, opt.SizeOfImage = fileAlign, rsrcRVA+align(size, 0x1000)
		sections = append(sections, pe.SectionHeader32{
			Name: [8]uint8{'.', 'r', 's', 'r', 'c'}, VirtualSize: size, VirtualAddress: rsrcRVA,
			SizeOfRawData: align(size, fileAlign), PointerToRawData: fileAlign,
			Characteristics: pe.IMAGE_SCN_CNT_INITIALIZED_DATA | pe.IMAGE_SCN_MEM_READ,
		})
	}
	binary.Write(&b, binary.LittleEndian, pe.FileHeader{Machine: machine, NumberOfSections: uint16(len(sections)), SizeOfOptionalHeader: uint16(binary.Size(opt)), Characteristics: chars})
	binary.Write(&b, binary.LittleEndian, opt)
	binary.Write(&b, binary.LittleEndian, sections)
	if rsrc != nil {
		b.Write(make([]byte, fileAlign-b.Len()))
		b.Write(rsrc)
		b.Write(make([]byte, align(uint32(len(rsrc)), fileAlign)-uint32(len(rsrc))))
	}
	return b.Bytes()
}

func align(n, to uint32) uint32 { return (n + to - 1) / to * to }

// resources is a resource section of one resource, version, of type RT_VERSION (16), name 1,
// language 0x409: three directories of one entry each, a data entry, the data.
func resources(version []byte) []byte {
	var b []byte
	put := func(words ...uint32) {
		for _, w := range words {
			b = binary.LittleEndian.AppendUint32(b, w)
		}
	}
	// IMAGE_RESOURCE_DIRECTORY (characteristics, time, version, 0 named and 1 id entry), its entry:
	// the id and the offset of what it leads to, the high bit set for a directory.
	dir := func(id, to uint32) { put(0, 0, 0, 1<<16, id, to) }
	const subdirectory = 1 << 31
	dir(16, subdirectory|0x18)
	dir(1, subdirectory|0x30)
	dir(0x409, 0x48)
	put(rsrcRVA+0x58, uint32(len(version)), 0, 0) // IMAGE_RESOURCE_DATA_ENTRY: RVA, size, code page
	return append(b, version...)
}

// versionInfo is info as a VS_VERSIONINFO: VS_FIXEDFILEINFO, StringFileInfo with one string table
// (US English, Unicode), VarFileInfo's Translation.
func versionInfo(info VersionInfo) []byte {
	ms := func(v [4]uint16) uint32 { return uint32(v[0])<<16 | uint32(v[1]) }
	ls := func(v [4]uint16) uint32 { return uint32(v[2])<<16 | uint32(v[3]) }
	var fixed []byte
	for _, w := range []uint32{0xFEEF04BD, 0x00010000, ms(info.FileVersion), ls(info.FileVersion),
		ms(info.ProductVersion), ls(info.ProductVersion), 0x3f, 0, 0x40004, 2, 0, 0, 0} {
		fixed = binary.LittleEndian.AppendUint32(fixed, w) // …, FileFlagsMask, FileFlags, VOS_NT_WINDOWS32, VFT_DLL, subtype, date
	}
	var table [][]byte
	for _, k := range slices.Sorted(maps.Keys(info.Strings)) {
		text := utf16z(info.Strings[k])
		table = append(table, versionBlock(k, true, text, len(text)/2))
	}
	return versionBlock("VS_VERSION_INFO", false, fixed, len(fixed),
		versionBlock("StringFileInfo", true, nil, 0, versionBlock("040904b0", true, nil, 0, table...)),
		versionBlock("VarFileInfo", true, nil, 0, versionBlock("Translation", false, []byte{0x09, 0x04, 0xb0, 0x04}, 4)))
}

// versionBlock is one of VS_VERSIONINFO's structures: wLength, wValueLength, wType, szKey, the
// value and the children, each aligned to 32 bits.
func versionBlock(key string, text bool, value []byte, valueLen int, children ...[]byte) []byte {
	pad := func(b []byte) []byte { return append(b, make([]byte, (4-len(b)%4)%4)...) }
	b := pad(append(make([]byte, 6), utf16z(key)...))
	b = append(b, value...)
	for _, c := range children {
		b = append(pad(b), c...)
	}
	binary.LittleEndian.PutUint16(b, uint16(len(b)))
	binary.LittleEndian.PutUint16(b[2:], uint16(valueLen))
	if text {
		binary.LittleEndian.PutUint16(b[4:], 1)
	}
	return b
}

// utf16z is s in little-endian UTF-16 with its NUL.
func utf16z(s string) []byte {
	var b []byte
	for _, w := range append(utf16.Encode([]rune(s)), 0) {
		b = binary.LittleEndian.AppendUint16(b, w)
	}
	return b
}
