package host

import (
	"runtime"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/internal/guestpath"
)

// hostPaths maps this host's paths to the paths a plugin sees, and back (host/internal/guestpath):
// the identity on a Unix host; on Windows C:\Program Files\NVIDIA is /C:/Program Files/NVIDIA and
// \\server\share\dir is /UNC/server/share/dir. It depends on the OS the host runs on, never on the
// platform a search is for: `find --target windows/amd64` on Linux searches Linux paths.
//
// Everything that crosses into the sandbox is mapped there (mount points, granted variables that
// hold absolute paths, request roots, system_resolve answers) and everything a plugin answers is
// mapped back before the host looks at it (candidates, tried paths). The host's own records — the
// result cache's observations, the trace, what is loaded and printed — stay in host form.
var hostPaths = guestpath.For(runtime.GOOS)

// hostTried maps the paths of a plugin's tried list back to host form; an entry that is no guest
// path (a variable name such as "$CUDA_PATH", a file name, a relative path) is kept as it is.
func hostTried(paths guestpath.Map, tried []abi.Attempt) []abi.Attempt {
	if !paths.Windows() || len(tried) == 0 {
		return tried
	}
	out := make([]abi.Attempt, len(tried))
	for i, a := range tried {
		out[i] = a
		if h, err := paths.ToHost(a.Path); err == nil {
			out[i].Path = h
		}
	}
	return out
}

// hostToolkitRoot is abi.ToolkitRoot for a host path: the toolkit root a library's directory
// (lib64, targets/<triple>/lib, bin/x64, …) belongs to, in host form.
func hostToolkitRoot(paths guestpath.Map, p string) (string, bool) {
	g, err := paths.ToGuest(p)
	if err != nil {
		return "", false
	}
	root, ok := abi.ToolkitRoot(g)
	if !ok || guestpath.IsVolumeRoot(root) {
		return "", false // a whole drive or share is no toolkit root
	}
	h, err := paths.ToHost(root)
	return h, err == nil
}
