// Package nativefind is pathfinder's search done natively, without wasm, a sandbox, config or caches:
// the floor a sandboxed search is measured against. It runs the first-party steps' own code (wheels,
// conda, envroots) over the real file system, for the builtin pack's dynamic libraries, and checks
// the ELF header of each candidate as the host does.
package nativefind

import (
	"os"
	"runtime"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/plugins/conda"
	"github.com/pathfinder-dev/pathfinder/plugins/envroots"
	"github.com/pathfinder-dev/pathfinder/plugins/wheels"
)

// Libraries reads the builtin pack's dynamic libraries.
func Libraries() ([]abi.Descriptor, error) {
	pack, err := catalog.New(catalog.Pack{Name: "nvidia.toml", Data: builtin.NVIDIAPack()})
	if err != nil {
		return nil, err
	}
	return pack.Descriptors(abi.KindDynamicLib), nil
}

// Find runs the wheels, conda and envroots searches for lib over sites and the environment and
// returns the first candidate that is an ELF file.
func Find(lib abi.Descriptor, sites []string) (string, bool) {
	req := &abi.Request{ABI: abi.Version, Kind: abi.KindDynamicLib, Platform: abi.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}, Library: lib}
	for _, s := range sites {
		req.Roots = append(req.Roots, abi.Root{Path: s, Role: abi.RoleSitePackages})
	}
	env := abi.Env{FS: os.DirFS("/"), Getenv: os.Getenv}
	for _, search := range []abi.SearchFunc{wheels.Search, conda.Search, envroots.Search} {
		for _, c := range search(env, req).Candidates {
			if f, err := binfmt.OpenELF(c.Path); err == nil {
				f.Close()
				return c.Path, true
			}
		}
	}
	return "", false
}
