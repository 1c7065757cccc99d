// Package wheels is the search step for NVIDIA pip wheels in Python site-packages directories
// (the CUDA 12 nvidia/<component>/lib layout and the CUDA 13 nvidia/cu13/lib layout).
package wheels

import (
	"path"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// Plugin registers the step.
var Plugin = abi.Plugin{Name: "wheels", Version: "1", Search: Search}

// Search looks in each granted site-packages directory, in the host's order. The descriptor's
// sub-directories are the outer loop and the site directories the inner one, so nvidia/cu13/lib in any
// site directory beats nvidia/cuda_runtime/lib in the first.
func Search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	var sites []string
	for _, r := range req.Roots {
		if r.Role == abi.RoleSitePackages {
			sites = append(sites, r.Path)
		}
	}
	if len(sites) == 0 {
		resp.Tried = append(resp.Tried, abi.Attempt{Reason: "no site-packages directory found"})
		return resp
	}
	var dirs []string
	for _, sub := range req.Library.SitePackagesDirs(req.Platform) {
		for _, site := range sites {
			dirs = append(dirs, path.Join(site, sub))
		}
	}
	abi.Find(env, req, resp, dirs)
	return resp
}
