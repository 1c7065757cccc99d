// Package envroots is the search step for install roots named by environment variables: the
// descriptor's own (CUDNN_PATH, NCCL_HOME, …), then CUDA_PATH, else CUDA_HOME.
package envroots

import (
	"path"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// Plugin registers the step.
var Plugin = abi.Plugin{Name: "envroots", Version: "1", Env: []string{"CUDA_PATH", "CUDA_HOME"}, Search: Search}

// Search tries the descriptor's install-root variables in order (found_via = the variable's name),
// then the toolkit root from CUDA_PATH, or CUDA_HOME when CUDA_PATH is unset. Every anchor directory
// is tried, in order.
func Search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	lib := &req.Library
	rels := lib.InstallRootDirs(req.Platform)
	for _, name := range lib.InstallRootEnvVars {
		if root, ok := env.EnvDir(resp, name); ok {
			abi.Find(env, req, resp, under(root, rels), name)
		}
	}
	name := "CUDA_PATH"
	if env.Lookupenv(name) == "" {
		resp.Tried = append(resp.Tried, abi.Attempt{Path: "$CUDA_PATH", Reason: "not set"})
		name = "CUDA_HOME"
	}
	if root, ok := env.EnvDir(resp, name); ok {
		abi.Find(env, req, resp, under(root, lib.AnchorDirs(req.Platform)), name)
	}
	return resp
}

func under(root string, rels []string) []string {
	dirs := make([]string, len(rels))
	for i, r := range rels {
		dirs[i] = path.Join(root, r)
	}
	return dirs
}
