// Package canary is the search step for a toolkit that only the system loader knows about: it asks the
// host where the loader would find a canary library (cudart), derives the toolkit root from that path,
// and searches the descriptor's anchor directories there. This finds nvvm and cupti, which are not on
// the loader's path, next to a system cudart.
package canary

import (
	"path"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// Plugin registers the step.
var Plugin = abi.Plugin{Name: "canary", Version: "1", Search: Search}

// Search resolves each canary of the descriptor through the host (nothing is loaded) and searches the
// toolkit root it lives in.
func Search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	lib := &req.Library
	if len(lib.CanaryAnchors) == 0 {
		resp.Tried = append(resp.Tried, abi.Attempt{Reason: "the descriptor names no canary library"})
		return resp
	}
	for _, canary := range lib.CanaryAnchors {
		p, err := env.Resolve(canary)
		if err != nil {
			resp.Tried = append(resp.Tried, abi.Attempt{Path: canary, Reason: "canary: " + err.Error()})
			continue
		}
		root, ok := abi.ToolkitRoot(p)
		if !ok {
			resp.Tried = append(resp.Tried, abi.Attempt{Path: p, Reason: "canary " + canary + " is not in a toolkit layout (lib64, lib, targets/<triple>/lib, bin): no root to derive"})
			continue
		}
		env.Log("canary %s at %s: toolkit root %s", canary, p, root)
		var dirs []string
		for _, rel := range lib.AnchorDirs(req.Platform) {
			dirs = append(dirs, path.Join(root, rel))
		}
		abi.Find(env, req, resp, dirs)
	}
	return resp
}
