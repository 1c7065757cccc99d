package loadermodel_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pathfinder-dev/pathfinder/internal/loadermodel"
)

// Where would dlopen("libfoo.so.1") find the library in an image mounted at root, for an x86_64
// process started with LD_LIBRARY_PATH=/opt/w32:/opt/app/lib? The 32-bit copy first in the path
// is skipped, as the loader skips it.
func ExampleLoader_Resolve() {
	root, err := os.MkdirTemp("", "ldso-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	writeLib(root, "/opt/w32/libfoo.so.1", elf.ELFCLASS32, elf.EM_386)
	writeLib(root, "/opt/app/lib/libfoo.so.1", elf.ELFCLASS64, elf.EM_X86_64)

	l := loadermodel.Loader{
		Root:          root,
		Getenv:        func(string) string { return "/opt/w32:/opt/app/lib" },
		DefaultDirs:   []string{"/usr/lib64"},
		HWCapsSubdirs: []string{},
		Machine:       elf.EM_X86_64,
	}
	res, err := l.Resolve("libfoo.so.1")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Path, "via", res.Via)
	for _, a := range res.Tried {
		fmt.Printf("skipped %s: %s\n", a.Path, a.Reason)
	}

	_, err = l.Resolve("libbar.so.2")
	fmt.Println(errors.Is(err, loadermodel.ErrNotFound), err)
	// Output:
	// /opt/app/lib/libfoo.so.1 via LD_LIBRARY_PATH
	// skipped /opt/w32/libfoo.so.1: wrong ELF class: ELFCLASS32, this process is ELFCLASS64
	// true the loader would not find "libbar.so.2" (4 places tried)
}

// writeLib writes just the ELF header of a shared object: all the loader's checks read.
func writeLib(root, name string, class elf.Class, machine elf.Machine) {
	ident := [elf.EI_NIDENT]byte{0x7f, 'E', 'L', 'F', byte(class), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)}
	var b bytes.Buffer
	if class == elf.ELFCLASS32 {
		binary.Write(&b, binary.LittleEndian, elf.Header32{Ident: ident, Type: uint16(elf.ET_DYN), Machine: uint16(machine), Version: 1, Ehsize: 52, Phentsize: 32})
	} else {
		binary.Write(&b, binary.LittleEndian, elf.Header64{Ident: ident, Type: uint16(elf.ET_DYN), Machine: uint16(machine), Version: 1, Ehsize: 64, Phentsize: 56})
	}
	b.Write(make([]byte, 64))
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		panic(err)
	}
}
