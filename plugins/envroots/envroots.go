// Package envroots is the search step for install roots named by environment variables: the
// descriptor's own (CUDNN_PATH, NCCL_HOME, …), then CUDA_PATH, else CUDA_HOME.
package envroots

import (
	"os"
	"path"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// Plugin registers the step.
var Plugin = abi.Plugin{Name: "envroots", Version: "1", Env: []string{"CUDA_PATH", "CUDA_HOME"}, Search: Search}

// Search tries the descriptor's install-root variables in order, then the toolkit root from
// CUDA_PATH, or CUDA_HOME when CUDA_PATH is unset, as cuda.pathfinder does: a CUDA_HOME naming
// another directory than CUDA_PATH is reported as passed over. Every anchor directory is tried, in
// order.
func Search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	lib := &req.Library
	rels := lib.InstallRootDirs(req.Platform)
	for _, name := range lib.InstallRootEnvVars {
		if root, ok := env.EnvDir(resp, name); ok {
			abi.Find(env, req, resp, under(root, rels))
		}
	}
	name := "CUDA_PATH"
	if cudaPath, cudaHome := env.Lookupenv(name), env.Lookupenv("CUDA_HOME"); cudaPath == "" {
		resp.Tried = append(resp.Tried, abi.Attempt{Path: "$CUDA_PATH", Reason: "not set"})
		name = "CUDA_HOME"
	} else if cudaHome != "" && !sameDir(env, cudaPath, cudaHome) {
		resp.Ignored = append(resp.Ignored, abi.IgnoredVar{Var: "CUDA_HOME", Reason: "CUDA_PATH is set, and CUDA_HOME is read only when CUDA_PATH is not"})
	}
	if root, ok := env.EnvDir(resp, name); ok {
		abi.Find(env, req, resp, under(root, lib.AnchorDirs(req.Platform)))
	}
	return resp
}

// sameDir reports whether two variables name one directory: the same absolute path, or two paths
// to one directory (a link), whatever else is wrong with either.
func sameDir(env abi.Env, a, b string) bool {
	if !path.IsAbs(a) || !path.IsAbs(b) {
		return false
	}
	if path.Clean(a) == path.Clean(b) {
		return true
	}
	fa, errA := env.Stat(a)
	fb, errB := env.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func under(root string, rels []string) []string {
	dirs := make([]string, len(rels))
	for i, r := range rels {
		dirs[i] = path.Join(root, r)
	}
	return dirs
}
