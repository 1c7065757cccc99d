package cudaversion

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// layouts are the directories below a toolkit root that hold what a search finds: abi.ToolkitRoot's
// for libraries and binaries (lib, lib64, bin, bin/x64 …), and the other kinds' (headers, NVVM,
// libdevice, CUPTI, Windows' static libraries). Only these are walked up: a file anywhere else
// (/usr/lib/x86_64-linux-gnu/libcudart.so.12) lies in no toolkit root.
var layouts = []string{
	"lib", "lib64", "bin", "bin/x64", "bin/x86_64", "bin/arm64", "lib/x64", "lib/arm64",
	"include", "include/cccl", "include/targets/*", "include/targets/*/cccl",
	"nvvm/lib64", "nvvm/libdevice", "nvvm/bin", "nvvm/bin/x64", "nvvm/bin/arm64", "nvvm/include",
	"extras/CUPTI/lib64",
}

// Bounds on what is read of a toolkit root: version.json is a few KiB; CUDA_VERSION is defined
// near the top of cuda.h, which is a MiB in all.
const (
	maxVersionJSON = 1 << 20
	cudaHHead      = 256 << 10
)

// fromToolkit dates a by the toolkit root it lies in: version.json's "cuda" version (CUDA 11.1 on),
// else include/cuda.h's CUDA_VERSION. A targets/<triple> directory counts as a root (its
// include/cuda.h), and so does the root above it (its version.json). A directory in site-packages
// is no toolkit root, though CUDA 13's wheels lay nvidia/cu13 out as one: each wheel there has a
// version of its own, and nvidia/cu13/include/cuda.h is only the one that installed it.
func fromToolkit(a Artifact, rec *observe.Recorder) (Answer, string) {
	var roots []string
	wheels := false
	for _, dir := range a.dirs() {
		for _, l := range layouts {
			root, ok := under(dir, l)
			if ok && inSitePackages(root) {
				wheels = true
			}
			if !ok || inSitePackages(root) {
				continue
			}
			roots = appendNew(roots, root)
			if top, ok := under(root, "targets/*"); ok {
				roots = appendNew(roots, top)
			}
		}
	}
	switch {
	case len(roots) == 0 && wheels:
		return Answer{}, strings.Join(a.dirs(), " and ") + " lie in site-packages: a wheel's, not a toolkit's"
	case len(roots) == 0:
		return Answer{}, strings.Join(a.dirs(), " and ") + " lie in no toolkit root's layout"
	}
	var looked []string
	for _, root := range roots {
		ans, why := versionJSON(a, root, rec)
		if ans.CUDA != "" {
			return ans, ""
		}
		looked = append(looked, why)
	}
	for _, root := range roots {
		ans, why := cudaH(root, rec)
		if ans.CUDA != "" {
			return ans, ""
		}
		looked = append(looked, why)
	}
	return Answer{}, strings.Join(looked, "; ")
}

// inSitePackages reports whether dir lies in a Python site-packages (or Debian's dist-packages)
// directory.
func inSitePackages(dir string) bool {
	segs := strings.Split(filepath.ToSlash(dir), "/")
	return slices.Contains(segs, "site-packages") || slices.Contains(segs, "dist-packages")
}

// versionJSON reads root/version.json: {"cuda": {"name": "CUDA SDK", "version": "12.4.1"},
// "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}, …}. CUDA is "cuda"'s
// major.minor. The artifact's own Version is that of the component named after its library:
// "cuda_" or "lib" and the name in lower case, as NVIDIA names them (cuda_cudart, cuda_nvrtc,
// cuda_nvcc, libcublas, libcufft, libnvjitlink); a library of another name (nppc, in libnpp) gets none.
func versionJSON(a Artifact, root string, rec *observe.Recorder) (Answer, string) {
	p := filepath.Join(root, "version.json")
	data, whole, err := readFile(rec, p, maxVersionJSON)
	switch {
	case err != nil:
		return Answer{}, p + ": " + why(err)
	case !whole:
		return Answer{}, fmt.Sprintf("%s: larger than %d bytes", p, maxVersionJSON)
	}
	type component struct{ Version string }
	var doc map[string]json.RawMessage
	var cuda component
	if err := json.Unmarshal(data, &doc); err != nil {
		return Answer{}, p + ": not JSON: " + err.Error()
	}
	json.Unmarshal(doc["cuda"], &cuda)
	mm, ok := majorMinor(cuda.Version)
	if !ok {
		return Answer{}, fmt.Sprintf("%s: no CUDA version in \"cuda\" (%.40q)", p, cuda.Version)
	}
	ans := Answer{CUDA: mm, Detail: fmt.Sprintf("%s: CUDA %s", p, cuda.Version)}
	name := strings.ToLower(a.Library.Name)
	for _, key := range []string{"cuda_" + name, "lib" + name} {
		var c component
		if json.Unmarshal(doc[key], &c) == nil {
			if _, ok := numbers(c.Version); ok {
				ans.Version = c.Version
				ans.Detail += fmt.Sprintf(", %s %s", key, c.Version)
				break
			}
		}
	}
	return ans, ""
}

// cudaH reads `#define CUDA_VERSION 12040` from root/include/cuda.h: CUDA 12.4, and no Version.
func cudaH(root string, rec *observe.Recorder) (Answer, string) {
	p := filepath.Join(root, "include", "cuda.h")
	data, _, err := readFile(rec, p, cudaHHead)
	if err != nil {
		return Answer{}, p + ": " + why(err)
	}
	for line := range bytes.Lines(data) {
		f := strings.Fields(string(line))
		if len(f) < 3 || f[0] != "#define" || f[1] != "CUDA_VERSION" {
			continue
		}
		n, err := strconv.Atoi(f[2])
		if mm, ok := fromCUDAVersion(n); err == nil && ok {
			return Answer{CUDA: mm, Detail: fmt.Sprintf("%s: CUDA_VERSION %d", p, n)}, ""
		}
		return Answer{}, fmt.Sprintf("%s: CUDA_VERSION %.20q is no CUDA_VERSION", p, f[2])
	}
	return Answer{}, fmt.Sprintf("%s: no CUDA_VERSION in its first %d KiB", p, cudaHHead>>10)
}
