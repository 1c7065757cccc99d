package binfmt

import (
	"debug/elf"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakeelf"
)

// x86 is an x86-64 process's: what its loader takes.
var x86 = Arch{Class: Class64, Data: LittleEndian, Machine: MachineX86_64}

func TestVerifyHeader(t *testing.T) {
	good := fakeelf.Header(elf.ELFCLASS64, elf.EM_X86_64, elf.ET_DYN)
	with := func(off int, b ...byte) []byte {
		c := append([]byte(nil), good...)
		copy(c[off:], b)
		return c
	}
	tests := []struct {
		name   string
		data   []byte
		want   Verdict
		reason string
	}{
		{"shared object", good, Usable, ""},
		{"executable", with(16, byte(elf.ET_EXEC)), Usable, ""},
		{"GNU OS ABI", with(7, byte(elf.ELFOSABI_LINUX)), Usable, ""},
		{"empty", nil, Fatal, "file too short (0 bytes"},
		{"short", good[:63], Fatal, "file too short (63 bytes"},
		{"bad magic", with(0, 'x'), Fatal, "invalid ELF header"},
		{"32-bit", fakeelf.Header(elf.ELFCLASS32, elf.EM_386, elf.ET_DYN), Skipped, "wrong ELF class: ELFCLASS32"},
		{"big-endian", with(5, byte(elf.ELFDATA2MSB)), Fatal, "data encoding ELFDATA2MSB"},
		{"ident version", with(6, 0), Fatal, "version ident"},
		{"FreeBSD OS ABI", with(7, byte(elf.ELFOSABI_FREEBSD)), Fatal, "OS ABI invalid"},
		{"ABI version", with(8, 1), Fatal, "ABI version invalid"},
		{"padding", with(12, 1), Fatal, "nonzero padding"},
		{"e_version", with(20, 2), Fatal, "version does not match"},
		{"aarch64", with(18, byte(elf.EM_AARCH64)), Skipped, "wrong machine: EM_AARCH64, this process is EM_X86_64"},
		{"object file", with(16, byte(elf.ET_REL)), Fatal, "only ET_DYN and ET_EXEC"},
		{"phentsize", with(54, 55), Fatal, "phentsize 55"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, reason := VerifyHeader(strings.NewReader(string(tc.data)), x86)
			if v != tc.want || !strings.Contains(reason, tc.reason) {
				t.Errorf("VerifyHeader = %d, %q; want %d, %q", v, reason, tc.want, tc.reason)
			}
		})
	}
}

// FuzzVerifyHeader: any header gets a verdict, and only a well-formed one is usable.
func FuzzVerifyHeader(f *testing.F) {
	f.Add(fakeelf.Header(elf.ELFCLASS64, elf.EM_X86_64, elf.ET_DYN))
	f.Add(fakeelf.Header(elf.ELFCLASS32, elf.EM_386, elf.ET_DYN))
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, reason := VerifyHeader(strings.NewReader(string(data)), x86)
		if (v == Usable) != (reason == "") {
			t.Fatalf("verdict %d with reason %q", v, reason)
		}
		if v == Usable {
			if _, err := elf.NewFile(strings.NewReader(string(data) + strings.Repeat("\x00", 4096))); err != nil && strings.Contains(err.Error(), "magic") {
				t.Fatalf("usable, but debug/elf says %v", err)
			}
		}
	})
}
