package elfso

import (
	"debug/elf"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild: the object is a shared object with the soname asked for, or none; the arguments after
// the source reach gcc; a compile error says what gcc said.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, soname, code string
		args               []string
		wantSym            string
	}{
		{"with a soname", "libx.so.1", "int x(void) { return 1; }", nil, "x"},
		{"without one", "", "int y(void) { return 2; }", nil, "y"},
		{"a define after the source", "libz.so.1", "int NAME(void) { return 3; }", []string{"-DNAME=zed"}, "zed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name, "lib.so")
			Build(t, p, tt.soname, tt.code, tt.args...)
			f, err := elf.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sonames, _ := f.DynString(elf.DT_SONAME)
			syms, _ := f.DynamicSymbols()
			var names []string
			for _, s := range syms {
				names = append(names, s.Name)
			}
			if f.Type != elf.ET_DYN || strings.Join(sonames, ",") != tt.soname || !strings.Contains(","+strings.Join(names, ",")+",", ","+tt.wantSym+",") {
				t.Fatalf("type %v, sonames %q, symbols %q", f.Type, sonames, names)
			}
		})
	}
	if err := Compile(filepath.Join(dir, "bad.so"), "", "int broken("); err == nil || !strings.Contains(err.Error(), "<stdin>") {
		t.Fatalf("Compile of broken C = %v; want gcc's message", err)
	}
}
