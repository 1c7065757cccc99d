// Package canary is the search step for a toolkit that only the system loader knows about: the host
// finds where the loader would find a canary library (cudart), derives the toolkit root from that
// path and grants it (@canary-roots, each a root of role canary-root); the step searches the
// descriptor's anchor directories there. This finds nvvm and cupti, which are not on the loader's
// path, next to a system cudart.
package canary

import (
	"path"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// Plugin registers the step.
var Plugin = abi.Plugin{Name: "canary", Version: "1", Search: Search}

// Search searches the anchor directories of each canary root the host granted, in its order. The
// host worked the roots out (its log says where it found each canary, and what root that is): the
// step derives none itself.
func Search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	lib := &req.Library
	if len(lib.CanaryAnchors) == 0 {
		resp.Tried = append(resp.Tried, abi.Attempt{Reason: "the descriptor names no canary library"})
		return resp
	}
	granted := false
	for _, r := range req.Roots {
		if r.Role != abi.RoleCanaryRoot {
			continue
		}
		granted = true
		var dirs []string
		for _, rel := range lib.AnchorDirs(req.Platform) {
			dirs = append(dirs, path.Join(r.Path, rel))
		}
		abi.Find(env, req, resp, dirs)
	}
	if !granted {
		resp.Tried = append(resp.Tried, abi.Attempt{Reason: "no canary root granted (" + strings.Join(lib.CanaryAnchors, ", ") + ")"})
	}
	return resp
}
