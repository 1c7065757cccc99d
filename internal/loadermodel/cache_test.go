package loadermodel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/ld.so.cache* from the real ldconfig")

func readGolden(t testing.TB, format string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", goldenFormats[format]))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGoldenCaches proves testdata/ld.so.cache* are what ldconfig makes of goldenTree. Their
// bytes carry the generating glibc's version, so what must match is the entries; -update rewrites
// the files.
func TestGoldenCaches(t *testing.T) {
	if testing.Short() {
		t.Skip("runs gcc and ldconfig")
	}
	root := t.TempDir()
	tree(t, root, goldenTree)
	for format, file := range goldenFormats {
		t.Run(format, func(t *testing.T) {
			fresh := ldconfig(t, root, format, goldenDirs...)
			if *update {
				if err := os.WriteFile(filepath.Join("testdata", file), fresh, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := ParseCache(fresh)
			if err != nil {
				t.Fatalf("fresh %s cache: %v", format, err)
			}
			got, err := ParseCache(readGolden(t, format))
			if err != nil {
				t.Fatalf("testdata/%s: %v", file, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("testdata/%s is stale (go test -run TestGoldenCaches -update):\n got %+v\nwant %+v", file, got, want)
			}
		})
	}
}

func TestParseCache(t *testing.T) {
	plain := func(name, path string) CacheEntry { return CacheEntry{Name: name, Path: path, Flags: 0x0303} }
	named := func(sub string, index uint64) CacheEntry {
		return CacheEntry{Name: "libfoo.so.1", Path: "/opt/b/glibc-hwcaps/" + sub + "/libfoo.so.1", Flags: 0x0303, HWCap: 1<<62 | index, HWCapsSubdir: sub}
	}
	// ldconfig sorts by libcmp, descending: libfoo.so.10 before libfoo.so.9 before libfoo.so.1,
	// the glibc-hwcaps entries of a name before its plain ones.
	wantNew := []CacheEntry{
		{Name: "libqux.so.3", Path: "/opt/c/libqux.so.3", Flags: 0x0001},
		plain("libfoo.so.10", "/opt/a/libfoo.so.10"),
		plain("libfoo.so.9", "/opt/a/libfoo.so.9"),
		named("x86-64-v2", 0),
		named("x86-64-v3", 1),
		plain("libfoo.so.1", "/opt/b/libfoo.so.1"),
		plain("libfoo.so.1", "/opt/a/libfoo.so.1"),
		plain("libbar.so.2", "/opt/b/libbar.so.2"),
	}
	t.Run("new format", func(t *testing.T) {
		got, err := ParseCache(readGolden(t, "new"))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantNew) {
			t.Errorf("got\n%+v\nwant\n%+v", got, wantNew)
		}
	})
	t.Run("old format with the new one embedded", func(t *testing.T) {
		got, err := ParseCache(readGolden(t, "compat"))
		if err != nil {
			t.Fatal(err)
		}
		// ldconfig writes the glibc-hwcaps names relative to the new header, the loader reads
		// them relative to the file: it sees other strings, and never uses these entries
		// (TestResolve_MatchesDlopenInChroot proves it).
		for i := range got {
			if got[i].HWCapsSubdir != "" && got[i].HWCapsSubdir == wantNew[i].HWCapsSubdir {
				t.Errorf("entry %d: glibc-hwcaps name %q read relative to the new header", i, got[i].HWCapsSubdir)
			}
			got[i].HWCapsSubdir = wantNew[i].HWCapsSubdir
		}
		if !reflect.DeepEqual(got, wantNew) {
			t.Errorf("got\n%+v\nwant\n%+v", got, wantNew)
		}
	})
	t.Run("old format", func(t *testing.T) {
		got, err := ParseCache(readGolden(t, "old"))
		if err != nil {
			t.Fatal(err)
		}
		// The old format has no hwcap field: the glibc-hwcaps entries are plain ones there.
		want := append([]CacheEntry(nil), wantNew...)
		for i := range want {
			want[i].HWCap, want[i].HWCapsSubdir = 0, ""
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got\n%+v\nwant\n%+v", got, want)
		}
	})
}

func TestParseCache_Errors(t *testing.T) {
	good := readGolden(t, "new")
	patched := func(off int, v uint32) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	extOff := int(binary.LittleEndian.Uint32(good[32:]))
	firstEntry := newHeaderSize
	hwcapsEntry := newHeaderSize + 3*newEntrySize // named("x86-64-v2") in TestParseCache
	oldHeader := append([]byte(oldCacheMagic+"\x00"), 0xff, 0xff, 0, 0)

	tests := []struct {
		name    string
		data    []byte
		want    string
		ignored bool // the loader ignores the whole file; otherwise only the entries it touches
	}{
		{"empty file", nil, "empty file", true},
		{"unknown magic", []byte("this is not a cache at all, just text\n"), "unknown magic", true},
		{"cut inside the magic", good[:10], "unknown magic", true},
		{"cut inside the header", good[:40], "truncated", true},
		{"cut inside the entries", good[:newHeaderSize+2*newEntrySize], "truncated: header says 8 entries", true},
		{"cut inside the strings", good[:len(good)-60], "beyond the end of the file", false},
		{"key offset past the end", patched(firstEntry+4, 0xfffff), "entry 0: key offset 1048575 is outside the file", false},
		{"value offset past the end", patched(firstEntry+8, uint32(len(good))), "entry 0: value offset", false},
		{"big-endian cache", patched(28, 3), "not little-endian", true},
		{"extension directory past the end", patched(32, uint32(len(good)+4)), "extension directory: offset", false},
		{"extension directory misaligned", patched(32, uint32(extOff+1)), "misaligned", false},
		{"extension magic", patched(extOff, 0x12345678), "magic 0x12345678", false},
		{"extension section count", patched(extOff+4, 1<<28), "sections do not fit", false},
		{"glibc-hwcaps index out of range", patched(hwcapsEntry+16, 7), "glibc-hwcaps index 7, but the cache lists 2", false},
		{"old format, more entries than bytes", oldHeader, "truncated: header says 65535 entries", true},
		{"old format, header cut", []byte(oldCacheMagic), "old-format header", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := ParseCache(tc.data)
			if !errors.Is(err, ErrBadCache) {
				t.Fatalf("ParseCache = %d entries, %v; want ErrBadCache", len(entries), err)
			}
			var ce *CacheError
			if !errors.As(err, &ce) {
				t.Fatalf("%T is not a *CacheError", err)
			}
			if entries != nil {
				t.Errorf("a bad cache yielded %d entries", len(entries))
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "malformed ld.so.cache") {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if c := readCache(tc.data); c.ignored != tc.ignored || c.err == nil {
				t.Errorf("readCache: ignored = %v, err = %v; want ignored = %v and the error", c.ignored, c.err, tc.ignored)
			}
		})
	}
}

// Every cut of a real cache is an error, never a panic and never a shorter list.
func TestParseCache_EveryTruncation(t *testing.T) {
	for format, file := range goldenFormats {
		data := readGolden(t, format)
		for n := range len(data) {
			if _, err := ParseCache(data[:n]); !errors.Is(err, ErrBadCache) {
				t.Fatalf("%s cut to %d of %d bytes: err = %v, want ErrBadCache", file, n, len(data), err)
			}
		}
	}
}

// The machine's own cache parses and has the C library where the machine's loader finds it.
func TestParseCache_SystemCache(t *testing.T) {
	data, err := os.ReadFile(DefaultCachePath)
	if err != nil {
		t.Skipf("no system cache: %v", err)
	}
	entries, err := ParseCache(data)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := findTarget(elf.EM_NONE, elf.ELFCLASSNONE)
	if err != nil {
		t.Skip(err)
	}
	p, ok := lookupCache(slotsOf(entries), "libc.so.6", tg, newHWCaps(tg.Machine, nil))
	if !ok {
		t.Fatalf("libc.so.6 not in %s (%d entries)", DefaultCachePath, len(entries))
	}
	if !strings.HasPrefix(p, "/") || filepath.Base(p) != "libc.so.6" {
		t.Errorf("libc.so.6 => %q", p)
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("the cache's libc.so.6: %v", err)
	}
}

func Test_lookupCache(t *testing.T) {
	x86, _ := findTarget(elf.EM_X86_64, elf.ELFCLASS64)
	arm, _ := findTarget(elf.EM_AARCH64, elf.ELFCLASS64)
	golden, err := ParseCache(readGolden(t, "new"))
	if err != nil {
		t.Fatal(err)
	}
	legacy := []CacheEntry{
		{Name: "libl.so.1", Path: "/l/haswell/libl.so.1", Flags: 0x0303, HWCap: 1 << 50},
		{Name: "libl.so.1", Path: "/l/avx512_1/libl.so.1", Flags: 0x0303, HWCap: 1 << 2},
		{Name: "libl.so.1", Path: "/l/tls/libl.so.1", Flags: 0x0303, HWCap: 1 << 63},
		{Name: "libl.so.1", Path: "/l/libl.so.1", Flags: 0x0303},
	}
	// A glibc-hwcaps entry also carries the ISA level its library was built for (here x86-64-v3,
	// level 2); on a CPU without that level the loader passes over it.
	isa := []CacheEntry{
		{Name: "libi.so.1", Path: "/i/glibc-hwcaps/x86-64-v3/libi.so.1", Flags: 0x0303, HWCap: 1<<62 | 2<<32 | 0, HWCapsSubdir: "x86-64-v3"},
		{Name: "libi.so.1", Path: "/i/libi.so.1", Flags: 0x0303},
	}
	v3 := newHWCaps(elf.EM_X86_64, []string{"glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v2"})
	baseline := v3
	baseline.isaLevels = 1
	armISA := append([]CacheEntry(nil), isa...)
	for i := range armISA {
		armISA[i].Flags = 0x0a03
	}

	tests := []struct {
		name    string
		entries []CacheEntry
		soname  string
		t       target
		caps    hwcaps
		want    string
	}{
		{"plain entry, first in cache order", golden, "libfoo.so.1", x86, newHWCaps(elf.EM_X86_64, nil), "/opt/b/libfoo.so.1"},
		{"most preferred glibc-hwcaps entry", golden, "libfoo.so.1", x86, newHWCaps(elf.EM_X86_64, []string{"glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v2"}), "/opt/b/glibc-hwcaps/x86-64-v3/libfoo.so.1"},
		{"only the active glibc-hwcaps entry", golden, "libfoo.so.1", x86, newHWCaps(elf.EM_X86_64, []string{"glibc-hwcaps/x86-64-v2"}), "/opt/b/glibc-hwcaps/x86-64-v2/libfoo.so.1"},
		{"ISA level the CPU has", isa, "libi.so.1", x86, v3, "/i/glibc-hwcaps/x86-64-v3/libi.so.1"},
		{"ISA level too high for the CPU", isa, "libi.so.1", x86, baseline, "/i/libi.so.1"},
		{"no ISA levels on aarch64", armISA, "libi.so.1", arm, newHWCaps(elf.EM_AARCH64, []string{"glibc-hwcaps/x86-64-v3"}), "/i/glibc-hwcaps/x86-64-v3/libi.so.1"},
		{"numbers compare as numbers", golden, "libfoo.so.10", x86, newHWCaps(elf.EM_X86_64, nil), "/opt/a/libfoo.so.10"},
		{"leading zeros compare equal, as in glibc", golden, "libfoo.so.09", x86, newHWCaps(elf.EM_X86_64, nil), "/opt/a/libfoo.so.9"},
		{"32-bit entry never matches x86_64", golden, "libqux.so.3", x86, newHWCaps(elf.EM_X86_64, nil), ""},
		{"x86_64 entries never match aarch64", golden, "libbar.so.2", arm, newHWCaps(elf.EM_AARCH64, nil), ""},
		{"absent", golden, "libnope.so.1", x86, newHWCaps(elf.EM_X86_64, nil), ""},
		{"empty cache", nil, "libfoo.so.1", x86, newHWCaps(elf.EM_X86_64, nil), ""},
		// glibc's hwcap_exclude never excludes the tls bit, whatever the subdirectories.
		{"legacy: a tls entry is always allowed", legacy, "libl.so.1", x86, newHWCaps(elf.EM_X86_64, nil), "/l/tls/libl.so.1"},
		{"legacy: plain entry after the excluded ones", legacy[:2:2], "libl.so.1", x86, newHWCaps(elf.EM_X86_64, nil), ""},
		{"legacy: plain entry", append(legacy[:2:2], legacy[3]), "libl.so.1", x86, newHWCaps(elf.EM_X86_64, nil), "/l/libl.so.1"},
		{"legacy: avx512_1 needs the avx512_1 hwcap", legacy, "libl.so.1", x86, newHWCaps(elf.EM_X86_64, []string{"avx512_1/x86_64", "tls"}), "/l/avx512_1/libl.so.1"},
		{"legacy: haswell needs the haswell platform", legacy, "libl.so.1", x86, newHWCaps(elf.EM_X86_64, []string{"tls/haswell/x86_64"}), "/l/haswell/libl.so.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := lookupCache(slotsOf(tc.entries), tc.soname, tc.t, tc.caps)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("lookupCache(%q) = %q, %v; want %q", tc.soname, got, ok, tc.want)
			}
		})
	}
}

// slotsOf is entries as the loader sees a sound cache.
func slotsOf(entries []CacheEntry) []cacheSlot {
	slots := make([]cacheSlot, len(entries))
	for i, e := range entries {
		slots[i] = cacheSlot{CacheEntry: e, keyOK: true, valueOK: true, hwcapsOK: e.HWCapsSubdir != ""}
	}
	return slots
}

func Test_libcmp(t *testing.T) {
	tests := []struct {
		a, b   string
		signed bool
		want   int // sign only
	}{
		{"libfoo.so.1", "libfoo.so.1", true, 0},
		{"libfoo.so.9", "libfoo.so.10", true, -1},
		{"libfoo.so.10", "libfoo.so.9", true, 1},
		{"libfoo.so.01", "libfoo.so.1", true, 0},
		{"libfoo.so.1", "libfoo.so", true, 1},
		{"libfoo.so", "libfoo.so.1", true, -1},
		{"lib2", "liba", true, 1}, // a digit sorts after a non-digit
		{"liba", "lib2", true, -1},
		{"lib\xe9", "liba", true, -1}, // signed char: 0xe9 is negative on x86
		{"lib\xe9", "liba", false, 1}, // unsigned on arm64
	}
	for _, tc := range tests {
		got := libcmp(tc.a, tc.b, tc.signed)
		if sign(got) != tc.want {
			t.Errorf("libcmp(%q, %q, signed=%v) = %d, want sign %d", tc.a, tc.b, tc.signed, got, tc.want)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
