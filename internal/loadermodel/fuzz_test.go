package loadermodel

import (
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseCache: no input makes the parser or the lookup panic, every failure is a *CacheError
// matching ErrBadCache, and the strict parser and the loader's lenient reading agree on sound files.
func FuzzParseCache(f *testing.F) {
	for _, file := range goldenFormats {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if data, err := os.ReadFile(DefaultCachePath); err == nil {
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte(newCacheMagic))
	f.Add([]byte(oldCacheMagic + "\x00\x01\x00\x00\x00"))

	x86, _ := findTarget(elf.EM_X86_64, elf.ELFCLASS64)
	arm, _ := findTarget(elf.EM_AARCH64, elf.ELFCLASS64)
	caps := newHWCaps(elf.EM_X86_64, []string{"glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v2", "tls/x86_64", "haswell"})
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseCache(data)
		c := readCache(data)
		if err != nil {
			var ce *CacheError
			if !errors.Is(err, ErrBadCache) || !errors.As(err, &ce) || entries != nil {
				t.Fatalf("ParseCache = %d entries, %v (%T)", len(entries), err, err)
			}
			if c.err == nil {
				t.Fatalf("ParseCache fails (%v) where readCache sees no defect", err)
			}
		} else {
			if c.err != nil || c.ignored || len(c.slots) != len(entries) {
				t.Fatalf("ParseCache succeeds where readCache says %v (ignored %v)", c.err, c.ignored)
			}
			for i, e := range entries {
				s := c.slots[i]
				if !s.keyOK || !s.valueOK || strings.ContainsRune(e.Name+e.Path, 0) || (e.isHWCapsEntry() && !s.hwcapsOK) {
					t.Fatalf("entry %d of a sound cache is unusable: %+v", i, s)
				}
			}
		}
		for _, name := range []string{"libc.so.6", "libfoo.so.1", ""} {
			lookupCache(c.slots, name, x86, caps)
			lookupCache(c.slots, name, arm, newHWCaps(elf.EM_AARCH64, nil))
		}
		for _, e := range entries {
			if p, ok := lookupCache(c.slots, e.Name, x86, caps); ok && p == "" {
				t.Fatalf("lookup of %q found an empty path", e.Name)
			}
		}
	})
}

// FuzzReadInterpreter: any bytes read as a loader binary give absolute directories or none.
func FuzzReadInterpreter(f *testing.F) {
	if tg, err := findTarget(elf.EM_NONE, elf.ELFCLASSNONE); err == nil {
		if data, err := os.ReadFile(tg.interp); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("\x00/lib64/\x00/usr/lib64/\x00stable release version 2.39.\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		facts := readInterpreter(data)
		for _, d := range facts.systemDirs {
			if !strings.HasPrefix(d, "/") || strings.HasSuffix(d, "/") || !strings.Contains(d, "lib") {
				t.Fatalf("system dir %q", d)
			}
		}
	})
}
