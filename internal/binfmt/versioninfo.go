package binfmt

import (
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
)

// VersionInfo is what a Windows image's VS_VERSIONINFO says of versions.
type VersionInfo struct {
	FileVersion, ProductVersion string // VS_FIXEDFILEINFO's, "6.14.11.12080"; "" when it has none
	Strings                     map[string]string
}

// Bounds on what is read of a PE: its resources, a few KiB in NVIDIA's DLLs, and no deeper than
// the three levels of a resource directory (type, name, language).
const maxResources = 1 << 20

const rtVersion = 16 // RT_VERSION, the resource type of a VS_VERSIONINFO

var errNoVersion = errors.New("no RT_VERSION resource")

// ReadVersionInfo reads the VS_VERSIONINFO of the PE image r: the first RT_VERSION resource, in
// the resource section. Garbage is an error, never a panic or a large allocation.
func ReadVersionInfo(r io.ReaderAt) (VersionInfo, error) {
	f, err := pe.NewFile(r)
	if err != nil {
		return VersionInfo{}, err
	}
	var dirs []pe.DataDirectory
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		dirs = oh.DataDirectory[:min(oh.NumberOfRvaAndSizes, 16)]
	case *pe.OptionalHeader32:
		dirs = oh.DataDirectory[:min(oh.NumberOfRvaAndSizes, 16)]
	}
	if len(dirs) <= pe.IMAGE_DIRECTORY_ENTRY_RESOURCE || dirs[pe.IMAGE_DIRECTORY_ENTRY_RESOURCE].Size == 0 {
		return VersionInfo{}, errors.New("no resources")
	}
	rva := dirs[pe.IMAGE_DIRECTORY_ENTRY_RESOURCE].VirtualAddress
	for _, s := range f.Sections {
		if rva < s.VirtualAddress || rva-s.VirtualAddress >= s.Size {
			continue
		}
		if s.Size > maxResources {
			return VersionInfo{}, fmt.Errorf("a resource section of %d bytes", s.Size)
		}
		data, err := s.Data()
		if err != nil {
			return VersionInfo{}, err
		}
		blob, err := versionResource(data, rva-s.VirtualAddress, s.VirtualAddress)
		if err != nil {
			return VersionInfo{}, err
		}
		return parseVersionInfo(blob)
	}
	return VersionInfo{}, errors.New("the resource directory lies in no section")
}

// versionResource returns the data of the first RT_VERSION resource, in the resource section sec
// (loaded at secRVA) whose directory begins at dir: type 16, then the first name, the first language.
func versionResource(sec []byte, dir, secRVA uint32) ([]byte, error) {
	off := dir
	for level := range 3 {
		if uint64(off)+16 > uint64(len(sec)) {
			return nil, errors.New("a resource directory out of its section")
		}
		n := uint64(le16(sec[off+12:])) + uint64(le16(sec[off+14:])) // named, then id entries
		if uint64(off)+16+8*n > uint64(len(sec)) {
			return nil, errors.New("resource entries out of their section")
		}
		found := false
		for i := range n {
			e := sec[uint64(off)+16+8*i:]
			if level > 0 || le32(e) == rtVersion {
				off, found = le32(e[4:]), true
				break
			}
		}
		const subdirectory = 1 << 31
		switch {
		case !found:
			return nil, errNoVersion
		case level < 2 && off&subdirectory == 0, level == 2 && off&subdirectory != 0:
			return nil, errors.New("a resource directory of the wrong shape")
		}
		off &^= subdirectory
	}
	if uint64(off)+16 > uint64(len(sec)) {
		return nil, errors.New("a resource data entry out of its section")
	}
	rva, size := le32(sec[off:]), le32(sec[off+4:])
	start := uint64(rva) - uint64(secRVA)
	if rva < secRVA || start+uint64(size) > uint64(len(sec)) {
		return nil, errors.New("the version resource lies outside the resource section")
	}
	return sec[start : start+uint64(size)], nil
}

// parseVersionInfo reads a VS_VERSIONINFO: VS_FIXEDFILEINFO's versions, and the strings of its
// StringFileInfo's first string table.
func parseVersionInfo(b []byte) (VersionInfo, error) {
	root, _, err := parseBlock(b)
	if err != nil {
		return VersionInfo{}, err
	}
	if root.key != "VS_VERSION_INFO" {
		return VersionInfo{}, fmt.Errorf("a resource called %.32q, not VS_VERSION_INFO", root.key)
	}
	vi := VersionInfo{Strings: map[string]string{}}
	if v := root.value; len(v) >= 52 && le32(v) == 0xFEEF04BD {
		vi.FileVersion = fixedVersion(le32(v[8:]), le32(v[12:]))
		vi.ProductVersion = fixedVersion(le32(v[16:]), le32(v[20:]))
	}
	for info := range blocks(root.children) {
		if info.key != "StringFileInfo" {
			continue
		}
		for table := range blocks(info.children) {
			for s := range blocks(table.children) {
				if _, seen := vi.Strings[s.key]; !seen {
					vi.Strings[s.key], _ = utf16z(s.value)
				}
			}
			break
		}
	}
	return vi, nil
}

func fixedVersion(ms, ls uint32) string {
	return fmt.Sprintf("%d.%d.%d.%d", ms>>16, ms&0xffff, ls>>16, ls&0xffff)
}

// block is one of VS_VERSIONINFO's nested structures: wLength, wValueLength, wType, szKey, then the
// value and the children, each aligned to 32 bits.
type block struct {
	key      string
	text     bool // wType 1: the value is text, and wValueLength counts its UTF-16 words
	value    []byte
	children []byte
}

func parseBlock(b []byte) (block, []byte, error) {
	if len(b) < 6 {
		return block{}, nil, errors.New("a version block cut short")
	}
	length, valueLen := int(le16(b)), int(le16(b[2:]))
	if length < 6 || length > len(b) {
		return block{}, nil, fmt.Errorf("a version block of %d bytes in %d", length, len(b))
	}
	body := b[:length]
	key, words := utf16z(body[6:])
	off := align4(6 + 2*(words+1))
	blk := block{key: key, text: le16(b[4:]) == 1}
	if blk.text {
		valueLen *= 2
	}
	off = min(off, length)
	end := min(off+valueLen, length) // writers miscount text values; the block's length bounds it
	blk.value = body[off:end]
	blk.children = body[min(align4(end), length):]
	return blk, b[min(align4(length), len(b)):], nil
}

// blocks yields the blocks laid one after another in b, up to the first that is garbage.
func blocks(b []byte) func(yield func(block) bool) {
	return func(yield func(block) bool) {
		for len(b) >= 6 {
			blk, rest, err := parseBlock(b)
			if err != nil || !yield(blk) {
				return
			}
			b = rest
		}
	}
}

// utf16z is the little-endian UTF-16 text at the start of b, up to a NUL or b's end, and how many
// words it took.
func utf16z(b []byte) (string, int) {
	var words []uint16
	for i := 0; i+1 < len(b); i += 2 {
		w := le16(b[i:])
		if w == 0 {
			break
		}
		words = append(words, w)
	}
	return string(utf16.Decode(words)), len(words)
}

func align4(n int) int { return (n + 3) &^ 3 }

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
