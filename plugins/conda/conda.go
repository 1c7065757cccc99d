// Package conda is the search step for the active conda environment, $CONDA_PREFIX.
package conda

import (
	"path"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// Plugin registers the step.
var Plugin = abi.Plugin{Name: "conda", Version: "1", Env: []string{"CONDA_PREFIX"}, Search: Search}

// Search looks in the descriptor's directories under $CONDA_PREFIX: for a dynamic library its anchor
// directories, as in a toolkit root (lib64, lib; nvvm/lib64 for nvvm; on Windows under Library:
// Library/bin/x64, Library/bin, Library/nvvm/bin), include and targets/<triple>/include for
// headers, bin for binaries.
func Search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	prefix, ok := env.EnvDir(resp, "CONDA_PREFIX")
	if !ok {
		return resp
	}
	var dirs []string
	for _, rel := range req.Library.CondaDirs(req.Platform) {
		dirs = append(dirs, path.Join(prefix, rel))
	}
	abi.Find(env, req, resp, dirs)
	return resp
}
