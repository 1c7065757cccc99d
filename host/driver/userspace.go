package driver

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/pathfinder-dev/pathfinder/internal/loadermodel"
)

// UserSpaceLibrary is one of the driver's user-space libraries as the dynamic loader would find it,
// read without loading it.
type UserSpaceLibrary struct {
	Soname string `json:"soname"` // "libcuda.so.1", "libnvidia-ml.so.1"
	// Path is where the loader would find it, RealPath the file it maps (every symlink resolved),
	// whose name carries the driver's version: libcuda.so.550.163.01. Both are "" when not found.
	Path     string `json:"path,omitempty"`
	RealPath string `json:"real_path,omitempty"`
	// Via says how: LD_LIBRARY_PATH, ld.so.cache, default-dirs, /usr/lib/wsl/lib (WSL2), or the
	// variable that names the file (PATHFINDER_CUDA_LIBRARY, PATHFINDER_NVML_LIBRARY).
	Via     string `json:"via,omitempty"`
	Version string `json:"version,omitempty"` // the driver version in RealPath's name; "" when it has none
	// Stub is set for the CUDA toolkit's stub (…/stubs/libcuda.so): it is for linking only, and every
	// call into it fails with CUDA_ERROR_STUB_LIBRARY.
	Stub bool `json:"stub,omitempty"`
	// Compat is set for a libcuda of NVIDIA's forward-compatibility package (…/compat/), which is
	// meant to be newer than the kernel module.
	Compat bool   `json:"compat,omitempty"`
	Error  string `json:"error,omitempty"` // why it was not found
}

// Found reports whether the loader would find the driver's own library: found, and not the
// toolkit's stub.
func (l UserSpaceLibrary) Found() bool { return l.Error == "" && !l.Stub }

// driverLibraries are the user-space libraries that tell the driver's version, with the variable
// that names the file the probe loads instead.
var driverLibraries = []struct{ soname, env string }{
	{"libcuda.so.1", envCUDALibrary},
	{"libnvidia-ml.so.1", envNVMLLibrary},
}

// probeUserSpace finds the driver's user-space libraries where the dynamic loader would, and reads
// the version from the name of the file it would map. It loads nothing, so it also answers where
// the kernel module is missing or another version.
func probeUserSpace(p *prober) methodResult {
	p.userSpace = []UserSpaceLibrary{}
	var parts []string
	found := 0
	for _, l := range driverLibraries {
		dl := p.findDriverLibrary(l.soname, l.env)
		p.userSpace = append(p.userSpace, dl)
		switch {
		case dl.Error != "":
			parts = append(parts, dl.Soname+": "+dl.Error)
			continue
		case dl.Stub:
			parts = append(parts, fmt.Sprintf("%s: %s is the CUDA toolkit's stub, not the driver's (%s)", dl.Soname, dl.Path, dl.Via))
			continue
		}
		found++
		d := fmt.Sprintf("%s %s: %s", dl.Soname, orDash(dl.Version), dl.Path)
		if dl.RealPath != dl.Path {
			d += " → " + filepath.Base(dl.RealPath)
		}
		parts = append(parts, d+" ("+dl.Via+")")
	}
	if found == 0 {
		return unavailable("%s", strings.Join(parts, "; "))
	}
	return ok(strings.Join(parts, "; "), nil)
}

// findDriverLibrary asks the loader model where soname is, or opens the file the override names.
// LD_LIBRARY_PATH counts only on this machine: a captured Root's loader never saw this process's.
func (p *prober) findDriverLibrary(soname, overrideEnv string) UserSpaceLibrary {
	dl := UserSpaceLibrary{Soname: soname}
	l := loadermodel.Loader{Root: p.root, Getenv: func(k string) string {
		if p.live {
			return p.getenv(k)
		}
		return ""
	}}
	via := ""
	name := soname
	if v := p.overrideFile(overrideEnv); v != "" {
		l.Root, name, via = "/", v, overrideEnv // a file of this machine, as the probe would load it
	}
	res, err := l.Resolve(name)
	if err != nil && via == "" && p.setup == SetupWSL2 {
		// WSL2's libraries are in a folder the loader searches only when ld.so.conf names it.
		if wres, werr := l.Resolve(wslLibDir + "/" + soname); werr == nil {
			res, err, via = wres, nil, wslLibDir
		}
	}
	if err != nil {
		dl.Error = err.Error()
		return dl
	}
	if via == "" {
		via = res.Via
	}
	dl.Path, dl.RealPath, dl.Via = res.Path, res.RealPath, via
	if dl.RealPath == "" {
		dl.RealPath = dl.Path
	}
	dl.Stub = loadermodel.IsStub(filepath.ToSlash(filepath.Dir(dl.Path))) || loadermodel.IsStub(filepath.ToSlash(filepath.Dir(dl.RealPath)))
	dl.Compat = hasDir(dl.Path, "compat") || hasDir(dl.RealPath, "compat")
	if !dl.Stub {
		dl.Version = versionInFileName(soname, filepath.Base(dl.RealPath))
	}
	return dl
}

func hasDir(path, dir string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(filepath.Dir(path)), "/"), dir)
}

// fileVersionRE is a driver version as file names carry it: a three- or four-digit branch (WSL2's
// libcuda.so.1.1 is no driver version).
var fileVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[1-9][0-9]{2,3}\.[0-9]{1,4}(\.[0-9]{1,4})?$`) })

// versionInFileName reads 550.163.01 from libcuda.so.550.163.01 (soname libcuda.so.1): what the
// driver's installers, Debian's packages and the NVIDIA Container Toolkit all name the file.
func versionInFileName(soname, file string) string {
	v, found := strings.CutPrefix(file, strings.TrimSuffix(soname, "1"))
	if !found || !fileVersionRE().MatchString(v) {
		return ""
	}
	return v
}
