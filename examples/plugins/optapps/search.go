package main

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// defaultRoot is where the site installs its toolkits, one directory per version.
const defaultRoot = "/opt/apps/cuda"

// plugin is what main.go registers. The name is the step name pathfinder.toml uses.
var plugin = abi.Plugin{
	Name:    "optapps",
	Version: "1.0.0",
	Env:     []string{"OPTAPPS_ROOT"}, // read only when the config grants it
	Search:  search,
}

// search looks in every toolkit under the root, newest version first, in the library's own toolkit
// directories (lib64 and lib for cudart, include for headers, bin for nvcc, ...). The root is the
// option "root", else $OPTAPPS_ROOT, else /opt/apps/cuda; the config must grant it with read.
func search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	root := req.Options["root"]
	if root == "" {
		root = env.Lookupenv("OPTAPPS_ROOT")
	}
	if root == "" {
		root = defaultRoot
	}
	if !path.IsAbs(root) {
		resp.Error = fmt.Sprintf("root %q is not an absolute path", root)
		return resp
	}
	root = path.Clean(root)
	anchors := req.Library.AnchorDirs(req.Platform)
	if len(anchors) == 0 {
		resp.Tried = append(resp.Tried, abi.Attempt{Path: root, Reason: req.Library.Name + " declares no toolkit directories"})
		return resp
	}
	entries, err := env.ReadDir(root)
	if err != nil {
		resp.Tried = append(resp.Tried, abi.Attempt{Path: root, Reason: "no such directory (is it granted in read?)"})
		return resp
	}
	var versions []string
	for _, e := range entries {
		switch p := path.Join(root, e.Name()); {
		case !isVersion(e.Name()):
			resp.Tried = append(resp.Tried, abi.Attempt{Path: p, Reason: "not a version directory"})
		case !env.IsDir(p):
			resp.Tried = append(resp.Tried, abi.Attempt{Path: p, Reason: "not a directory"})
		default:
			versions = append(versions, e.Name())
		}
	}
	sort.SliceStable(versions, func(i, j int) bool { return versionLess(versions[j], versions[i]) })
	for _, v := range versions {
		dirs := make([]string, len(anchors))
		for i, a := range anchors {
			dirs[i] = path.Join(root, v, a)
		}
		abi.Find(env, req, resp, dirs)
	}
	env.Log("%d toolkits under %s: %s", len(versions), root, strings.Join(versions, ", "))
	return resp
}

// isVersion accepts directory names such as 12.8, 13.0.1 or 12.4-update1: a digit first.
func isVersion(name string) bool { return name != "" && name[0] >= '0' && name[0] <= '9' }

// versionLess orders version names naturally: runs of digits compare as numbers (12.10 after 12.9),
// everything else as text.
func versionLess(a, b string) bool {
	for a != "" && b != "" {
		ra, restA := nextRun(a)
		rb, restB := nextRun(b)
		if ra != rb {
			na, errA := strconv.ParseUint(ra, 10, 64)
			nb, errB := strconv.ParseUint(rb, 10, 64)
			switch {
			case errA == nil && errB == nil && na != nb:
				return na < nb
			case errA == nil && errB != nil:
				return false // 12.8.1 after 12.8-rc
			case errA != nil && errB == nil:
				return true
			case errA != nil && errB != nil:
				return ra < rb
			}
		}
		a, b = restA, restB
	}
	return len(a) < len(b)
}

// nextRun splits s after its first run of digits or of non-digits.
func nextRun(s string) (run, rest string) {
	digit := s[0] >= '0' && s[0] <= '9'
	i := 1
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') == digit {
		i++
	}
	return s[:i], s[i:]
}
