// Package conda is the search step for the active conda environment, $CONDA_PREFIX.
package conda

import (
	"path"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// Plugin registers the step.
var Plugin = abi.Plugin{Name: "conda", Version: "1", Env: []string{"CONDA_PREFIX"}, Search: Search}

// Search looks in $CONDA_PREFIX/lib ($CONDA_PREFIX/Library/bin on Windows).
func Search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	prefix, ok := env.EnvDir(resp, "CONDA_PREFIX")
	if !ok {
		return resp
	}
	dir := path.Join(prefix, "lib")
	if req.Platform.OS == "windows" {
		dir = path.Join(prefix, "Library/bin")
	}
	abi.FindFiles(env, resp, []string{dir}, req.Library.FileNames(req.Platform), "conda")
	return resp
}
