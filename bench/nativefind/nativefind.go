// Package nativefind is pathfinder's wheels search for cudart done natively, without wasm, a sandbox,
// config or packs: the floor a sandboxed search is measured against. It runs the wheels step's own
// code over the real file system and checks the ELF header like the host does.
package nativefind

import (
	"debug/elf"
	"os"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/wheels"
)

var cudart = abi.Library{
	Name:              "cudart",
	LinuxSonames:      []string{"libcudart.so.13", "libcudart.so.12"},
	SitePackagesLinux: []string{"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"},
}

// Find runs the wheels search natively and returns the first candidate that is a valid ELF file.
func Find(sites []string) (string, bool) {
	req := &abi.Request{ABI: abi.Version, Platform: abi.Platform{OS: "linux", Arch: "amd64"}, Library: cudart}
	for _, s := range sites {
		req.Roots = append(req.Roots, abi.Root{Path: s, Role: abi.RoleSitePackages})
	}
	resp := wheels.Search(abi.Env{FS: os.DirFS("/")}, req)
	for _, c := range resp.Candidates {
		if f, err := elf.Open(c.Path); err == nil {
			f.Close()
			return c.Path, true
		}
	}
	return "", false
}
