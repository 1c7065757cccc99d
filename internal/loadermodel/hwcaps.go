package loadermodel

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/cpu"

	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
)

// hwcaps is what the loader derives from the CPU and its glibc version: the subdirectories it tries
// inside every search directory before the directory itself, and how it filters ld.so.cache entries.
type hwcaps struct {
	subdirs []string // most preferred first: "glibc-hwcaps/x86-64-v3", ..., "tls/x86_64", ...

	named     []string // active glibc-hwcaps names, most preferred first
	isaLevels uint32   // x86: bit n set = ISA level n usable (bit 0 = baseline)
	checkISA  bool     // the target has ISA levels (x86)

	legacyMask   uint64 // GLRO(dl_hwcap) & hwcap_mask: the legacy bits a cache entry may carry
	platformMask uint64 // _DL_HWCAP_PLATFORM
	platform     uint64 // 1 << the platform's bit; all ones for a platform the loader has no bit for
}

// x86 legacy hwcap and platform bits (glibc sysdeps/x86/dl-hwcap.h, dl-procinfo.h) and aarch64's
// single "important" bit (HWCAP_ATOMICS); "tls" is bit 63 everywhere.
var (
	legacyHWCapBits = sync.OnceValue(func() map[binfmt.Machine]map[string]uint64 {
		return map[binfmt.Machine]map[string]uint64{
			binfmt.MachineX86_64:  {"x86_64": 1 << 1, "avx512_1": 1 << 2, "tls": 1 << 63},
			binfmt.MachineAArch64: {"atomics": 1 << 8, "tls": 1 << 63},
		}
	})
	platformBits = sync.OnceValue(func() map[binfmt.Machine]map[string]uint64 {
		return map[binfmt.Machine]map[string]uint64{
			binfmt.MachineX86_64: {"haswell": 1 << 50, "xeon_phi": 1 << 51},
		}
	})
	platformMasks = sync.OnceValue(func() map[binfmt.Machine]uint64 { return map[binfmt.Machine]uint64{binfmt.MachineX86_64: 0xf << 48} })
)

// newHWCaps derives the cache filters from a subdirectory list, so that a list a caller sets and
// one detected from the CPU behave the same way.
func newHWCaps(m binfmt.Machine, subdirs []string) hwcaps {
	h := hwcaps{
		subdirs:      subdirs,
		checkISA:     m == binfmt.MachineX86_64,
		isaLevels:    1,
		platformMask: platformMasks()[m],
		platform:     ^uint64(0),
	}
	for _, s := range subdirs {
		if name, ok := strings.CutPrefix(s, "glibc-hwcaps/"); ok {
			h.named = append(h.named, name)
			var level int
			if _, err := fmt.Sscanf(name, "x86-64-v%d", &level); err == nil && level >= 2 && level <= 32 {
				h.isaLevels |= 1 << (level - 1)
			}
			continue
		}
		for _, c := range strings.Split(s, "/") {
			h.legacyMask |= legacyHWCapBits()[m][c]
			if bit, ok := platformBits()[m][c]; ok {
				h.platform = bit
			}
		}
	}
	return h
}

// detectHWCapsSubdirs returns the subdirectories the loader of glibc version v tries on this CPU,
// most preferred first. glibc 2.33 added glibc-hwcaps/; 2.37 dropped the legacy tls/, AT_PLATFORM
// and AT_HWCAP subdirectories. For a machine other than the one running, the CPU is unknown and the
// answer is none.
func detectHWCapsSubdirs(m binfmt.Machine, v glibcVersion) []string {
	if m != hostMachine() {
		return nil
	}
	glibcHWCaps := !v.known() || v.atLeast(2, 33)
	legacy := v.known() && !v.atLeast(2, 37)
	var subdirs []string
	switch m {
	case binfmt.MachineX86_64:
		x := cpu.X86
		v2 := x.HasCX16 && x.HasLAHF && x.HasPOPCNT && x.HasSSE3 && x.HasSSSE3 && x.HasSSE41 && x.HasSSE42
		v3 := v2 && x.HasAVX && x.HasAVX2 && x.HasBMI1 && x.HasBMI2 && x.HasF16C && x.HasFMA && x.HasLZCNT && x.HasMOVBE
		v4 := v3 && x.HasAVX512F && x.HasAVX512BW && x.HasAVX512CD && x.HasAVX512DQ && x.HasAVX512VL
		if glibcHWCaps {
			// sysdeps/x86_64/dl-hwcaps-subdirs.c, sysdeps/x86/get-isa-level.h
			for _, l := range []struct {
				name string
				ok   bool
			}{{"x86-64-v4", v4}, {"x86-64-v3", v3}, {"x86-64-v2", v2}} {
				if l.ok {
					subdirs = append(subdirs, "glibc-hwcaps/"+l.name)
				}
			}
		}
		if legacy {
			// sysdeps/x86/cpu-features.c: dl_hwcap is "x86_64", plus "avx512_1" and a "haswell" or
			// "xeon_phi" platform on Intel CPUs only; AT_PLATFORM is "x86_64" otherwise.
			caps, platform := []string{"x86_64"}, "x86_64"
			if cpuVendor() == "GenuineIntel" {
				if x.HasAVX512CD {
					if x.HasAVX512ER {
						if x.HasAVX512PF {
							platform = "xeon_phi"
						}
					} else if x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL {
						caps = append(caps, "avx512_1")
					}
				}
				if platform == "x86_64" && x.HasAVX2 && x.HasFMA && x.HasBMI1 && x.HasBMI2 && x.HasLZCNT && x.HasMOVBE && x.HasPOPCNT {
					platform = "haswell"
				}
			}
			subdirs = append(subdirs, legacySubdirs(caps, platform)...)
		}
	case binfmt.MachineAArch64:
		// No glibc-hwcaps subdirectories for aarch64; HWCAP_IMPORTANT is HWCAP_ATOMICS.
		if legacy {
			var caps []string
			if cpu.ARM64.HasATOMICS {
				caps = []string{"atomics"}
			}
			subdirs = append(subdirs, legacySubdirs(caps, "aarch64")...)
		}
	}
	return subdirs
}

// legacySubdirs is the power set glibc's _dl_important_hwcaps (before 2.37) builds from the hwcap
// names (in bit order), the platform and "tls": largest combinations first, each written from the
// last name to the first ("tls/x86_64/x86_64"), without the empty one (the directory itself) and
// without repeats.
func legacySubdirs(caps []string, platform string) []string {
	names := append(append(append([]string(nil), caps...), platform), "tls")
	n := len(names)
	var out []string
	seen := map[string]bool{}
	for set := 1<<n - 1; set > 0; set-- {
		var parts []string
		for i := n - 1; i >= 0; i-- {
			if set&(1<<i) != 0 {
				parts = append(parts, names[i])
			}
		}
		if s := strings.Join(parts, "/"); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// cpuVendor reads the vendor from /proc/cpuinfo (the CPU is the host's, whatever the Root);
// x/sys/cpu does not expose it.
func cpuVendor() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "vendor_id" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
