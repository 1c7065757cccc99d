package loadermodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// The layouts below are glibc's sysdeps/generic/dl-cache.h; the flag values are
// sysdeps/generic/ldconfig.h.
const (
	oldCacheMagic = "ld.so-1.7.0"          // libc5 and glibc 2.0/2.1
	newCacheMagic = "glibc-ld.so.cache1.1" // glibc 2.2 and later

	oldHeaderSize = 16 // magic[11], pad, nlibs
	oldEntrySize  = 12 // flags, key, value
	newHeaderSize = 48 // magic[17], version[3], nlibs, len_strings, flags, pad[3], extension_offset, unused[3]
	newEntrySize  = 24 // flags, key, value, osversion, hwcap

	cacheEndianMask   = 3 // cache_file_new.flags & 3
	cacheEndianUnset  = 0
	cacheEndianLittle = 2

	cacheExtensionMagic = 0xeaa42174 // (uint32_t) -358342284
	cacheExtGlibcHWCaps = 1          // cache_extension_tag_glibc_hwcaps

	// hwcapExtension marks an entry for a glibc-hwcaps subdirectory: the low 32 bits of HWCap index
	// the glibc-hwcaps extension section, bits 32..41 hold the ISA level the library needs.
	hwcapExtension = 1 << 62
	hwcapISAMask   = 1<<10 - 1

	flagELFLibc6     = 0x0003
	flagX8664Lib64   = 0x0300
	flagAArch64Lib64 = 0x0a00
)

// CacheEntry is one library of an ld.so.cache, in file order.
type CacheEntry struct {
	Name      string // the soname, the key dlopen's name is compared with
	Path      string // the file the loader opens
	Flags     int32  // ldconfig's FLAG_* bits, e.g. 0x0303 for an x86_64 glibc library
	OSVersion uint32 // new format only; unused since glibc 2.34
	HWCap     uint64 // new format only: legacy hwcap bits, or 1<<62 | ISA level<<32 | glibc-hwcaps index
	// HWCapsSubdir is the glibc-hwcaps subdirectory (e.g. "x86-64-v3") of an entry whose HWCap
	// has the extension bit (1<<62), as the loader reads it: relative to the start of the file.
	// In an old-format file with the new format embedded, ldconfig writes it relative to the new
	// header, so the loader reads another string there and never uses the entry.
	HWCapsSubdir string
}

// isaLevel is the x86 ISA level a glibc-hwcaps entry needs (0 = baseline, 1 = x86-64-v2, ...).
func (e CacheEntry) isaLevel() int { return int(e.HWCap>>32) & hwcapISAMask }

func (e CacheEntry) isHWCapsEntry() bool {
	return (e.HWCap>>32)&^hwcapISAMask == hwcapExtension>>32
}

// ParseCache decodes an ld.so.cache in any of the three layouts glibc reads: the new format alone
// (what ldconfig writes since glibc 2.32), the old format alone, and the old format with the new one
// embedded after its entries (then the new entries are returned, as the loader uses them). Any
// defect — truncation, an unknown magic, an offset outside the file — is an error matching
// ErrBadCache, and a bad cache yields no entries.
func ParseCache(data []byte) ([]CacheEntry, error) {
	c := readCache(data)
	if c.err != nil {
		return nil, c.err
	}
	entries := make([]CacheEntry, len(c.slots))
	for i, s := range c.slots {
		entries[i] = s.CacheEntry
	}
	return entries, nil
}

// cacheFile is an ld.so.cache read the way the loader reads it: defects that make the loader
// ignore the whole file leave ignored set; smaller ones (an offset out of range, a damaged
// glibc-hwcaps section) only mark the entries they touch, which the loader then passes over.
// err is the first defect of either kind.
type cacheFile struct {
	slots   []cacheSlot
	ignored bool
	err     error
}

type cacheSlot struct {
	CacheEntry
	keyOK, valueOK bool
	hwcapsOK       bool // a glibc-hwcaps entry whose subdirectory name the loader can read
}

func (c *cacheFile) defect(off int64, format string, args ...any) {
	if c.err == nil {
		c.err = &CacheError{Offset: off, Reason: fmt.Sprintf(format, args...)}
	}
}

// reject records a defect that makes the loader ignore the file.
func (c *cacheFile) reject(off int64, format string, args ...any) cacheFile {
	c.defect(off, format, args...)
	return cacheFile{ignored: true, err: c.err}
}

// readCache follows glibc's _dl_load_cache_lookup (elf/dl-cache.c): the new format is tried
// first, then the old one with the new one possibly embedded.
func readCache(data []byte) cacheFile {
	var c cacheFile
	switch {
	case bytes.HasPrefix(data, []byte(newCacheMagic)):
		return readNewCache(data, 0)
	case bytes.HasPrefix(data, []byte(oldCacheMagic)):
		return readOldCache(data)
	case len(data) == 0:
		return c.reject(-1, "empty file")
	default:
		n := min(len(data), len(newCacheMagic))
		return c.reject(0, "unknown magic %q, want %q or %q", data[:n], newCacheMagic, oldCacheMagic)
	}
}

func readOldCache(data []byte) cacheFile {
	var c cacheFile
	if len(data) < oldHeaderSize {
		return c.reject(-1, "truncated: %d bytes, the old-format header alone is %d", len(data), oldHeaderSize)
	}
	nlibs := uint64(binary.LittleEndian.Uint32(data[12:]))
	if have := uint64(len(data)-oldHeaderSize) / oldEntrySize; nlibs > have {
		return c.reject(12, "truncated: header says %d entries, the file holds at most %d", nlibs, have)
	}
	end := oldHeaderSize + int(nlibs)*oldEntrySize
	// The new format, when present, starts at the next 8-byte boundary (ALIGN_CACHE).
	if start := (end + 7) &^ 7; len(data) >= start+newHeaderSize && bytes.HasPrefix(data[start:], []byte(newCacheMagic)) {
		return readNewCache(data, start)
	}
	strs := data[end:]
	for i := range int(nlibs) {
		off := oldHeaderSize + i*oldEntrySize
		s := cacheSlot{CacheEntry: CacheEntry{Flags: int32(binary.LittleEndian.Uint32(data[off:]))}}
		s.Name, s.keyOK = c.str(strs, end, len(strs), binary.LittleEndian.Uint32(data[off+4:]), i, "key")
		s.Path, s.valueOK = c.str(strs, end, len(strs), binary.LittleEndian.Uint32(data[off+8:]), i, "value")
		c.slots = append(c.slots, s)
	}
	return c
}

// readNewCache reads the new format whose header is at data[start:]. Its string offsets count from
// that header; the loader accepts any offset below the file's size (for an embedded header that
// reaches past the end of the file, where the mapping reads as zeros). Extension offsets and the
// glibc-hwcaps names count from the start of the file.
func readNewCache(data []byte, start int) cacheFile {
	var c cacheFile
	hdr := data[start:]
	if len(hdr) < newHeaderSize {
		return c.reject(int64(start), "truncated: %d bytes from the new-format magic, its header alone is %d", len(hdr), newHeaderSize)
	}
	if endian := hdr[28] & cacheEndianMask; endian != cacheEndianUnset && endian != cacheEndianLittle {
		return c.reject(int64(start+28), "flags say the cache is not little-endian (endian bits %d)", endian)
	}
	nlibs := uint64(binary.LittleEndian.Uint32(hdr[20:]))
	if have := uint64(len(hdr)-newHeaderSize) / newEntrySize; nlibs > have {
		return c.reject(int64(start+20), "truncated: header says %d entries, the file holds at most %d", nlibs, have)
	}
	names, namesOK := c.extensions(data, binary.LittleEndian.Uint32(hdr[32:]))
	for i := range int(nlibs) {
		off := newHeaderSize + i*newEntrySize
		s := cacheSlot{CacheEntry: CacheEntry{
			Flags:     int32(binary.LittleEndian.Uint32(hdr[off:])),
			OSVersion: binary.LittleEndian.Uint32(hdr[off+12:]),
			HWCap:     binary.LittleEndian.Uint64(hdr[off+16:]),
		}}
		s.Name, s.keyOK = c.str(hdr, start, len(data), binary.LittleEndian.Uint32(hdr[off+4:]), i, "key")
		s.Path, s.valueOK = c.str(hdr, start, len(data), binary.LittleEndian.Uint32(hdr[off+8:]), i, "value")
		if s.isHWCapsEntry() {
			idx := uint64(uint32(s.HWCap))
			switch {
			case idx < uint64(len(names)) && namesOK[idx]:
				s.HWCapsSubdir, s.hwcapsOK = names[idx], true
			case idx >= uint64(len(names)):
				c.defect(int64(start+off+16), "entry %d (%q): glibc-hwcaps index %d, but the cache lists %d subdirectories", i, s.Name, idx, len(names))
			}
		}
		c.slots = append(c.slots, s)
	}
	return c
}

// extensions returns the glibc-hwcaps subdirectory names of the extension directory at offset off
// (0 = none), following glibc's cache_extension_load; ok[i] is false for a name the loader cannot
// read. A damaged directory only disables the glibc-hwcaps entries.
func (c *cacheFile) extensions(data []byte, off uint32) (names []string, ok []bool) {
	if off == 0 {
		return nil, nil
	}
	size := uint64(len(data))
	o := uint64(off)
	if o%4 != 0 || o+8 > size {
		c.defect(int64(o), "extension directory: offset %d misaligned or beyond the end of the file (%d bytes)", o, size)
		return nil, nil
	}
	if m := binary.LittleEndian.Uint32(data[o:]); m != cacheExtensionMagic {
		c.defect(int64(o), "extension directory: magic %#x, want %#x", m, cacheExtensionMagic)
		return nil, nil
	}
	count := uint64(binary.LittleEndian.Uint32(data[o+4:]))
	if o+8+count*16 > size {
		c.defect(int64(o+4), "extension directory: %d sections do not fit in the file", count)
		return nil, nil
	}
	var secOff, secLen uint64
	for i := range count {
		s := o + 8 + i*16
		tag := binary.LittleEndian.Uint32(data[s:])
		off := uint64(binary.LittleEndian.Uint32(data[s+8:]))
		n := uint64(binary.LittleEndian.Uint32(data[s+12:]))
		if off+n > size {
			c.defect(int64(s), "extension directory: section %d (tag %d) at %d+%d is beyond the end of the file", i, tag, off, n)
			return nil, nil
		}
		if tag == cacheExtGlibcHWCaps { // other tags: the generator's version, or newer glibc's
			secOff, secLen = off, n
		}
	}
	if secLen == 0 || secOff%4 != 0 || secLen%4 != 0 {
		if secOff != 0 || secLen != 0 {
			c.defect(int64(secOff), "extension directory: glibc-hwcaps section at %d+%d is empty or not a uint32 array", secOff, secLen)
		}
		return nil, nil
	}
	for j := secOff; j < secOff+secLen; j += 4 {
		strOff := uint64(binary.LittleEndian.Uint32(data[j:]))
		name, terminated := cString(data, strOff)
		if !terminated {
			c.defect(int64(j), "extension directory: glibc-hwcaps name at offset %d is outside the file or unterminated", strOff)
		}
		names, ok = append(names, name), append(ok, strOff < size)
	}
	return names, ok
}

// str reads the string at offset off of the table strs (at file offset base). The loader only
// checks off against limit and reads up to a NUL, zeros past the end of the file; the string it
// would read is returned either way, with whether the loader accepts the offset.
func (c *cacheFile) str(strs []byte, base, limit int, off uint32, entry int, field string) (string, bool) {
	s, terminated := cString(strs, uint64(off))
	if !terminated {
		c.defect(int64(base)+int64(off), "entry %d: %s offset %d is outside the file or unterminated", entry, field, off)
	}
	return s, uint64(off) < uint64(limit)
}

// cString is the NUL-terminated string at off (up to the end of b if unterminated), and whether
// it ends inside b.
func cString(b []byte, off uint64) (string, bool) {
	if off >= uint64(len(b)) {
		return "", false
	}
	n := bytes.IndexByte(b[off:], 0)
	if n < 0 {
		return string(b[off:]), false
	}
	return string(b[off : off+uint64(n)]), true
}

// libcmp is glibc's _dl_cache_libcmp: runs of digits compare as numbers, so "libfoo.so.10" sorts
// after "libfoo.so.9", and "libfoo.so.01" equals "libfoo.so.1". signedChar mirrors C's char on the
// target (signed on x86, unsigned on arm64); it only matters for bytes >= 0x80.
func libcmp(a, b string, signedChar bool) int {
	at := func(s string, i int) int {
		if i >= len(s) {
			return 0
		}
		if signedChar {
			return int(int8(s[i]))
		}
		return int(s[i])
	}
	isDigit := func(c int) bool { return c >= '0' && c <= '9' }
	i, j := 0, 0
	for at(a, i) != 0 {
		c1, c2 := at(a, i), at(b, j)
		switch {
		case isDigit(c1) && isDigit(c2):
			// C's int arithmetic; int32 keeps its wraparound on absurdly long digit runs.
			var v1, v2 int32
			for ; isDigit(at(a, i)); i++ {
				v1 = v1*10 + int32(at(a, i)-'0')
			}
			for ; isDigit(at(b, j)); j++ {
				v2 = v2*10 + int32(at(b, j)-'0')
			}
			if v1 != v2 {
				return int(v1 - v2)
			}
		case isDigit(c1):
			return 1
		case isDigit(c2):
			return -1
		case c1 != c2:
			return c1 - c2
		default:
			i++
			j++
		}
	}
	return at(a, i) - at(b, j)
}
