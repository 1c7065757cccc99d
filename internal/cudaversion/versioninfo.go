package cudaversion

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// fromVersionInfo dates a Windows DLL by its VS_VERSIONINFO. NVIDIA's DLLs carry a file version
// of the form 6.14.11.N. The runtime's N is the CUDA_VERSION it was built as: cudart64_12.dll of
// CUDA 12.6 is 6.14.11.12060, of CUDA 12.8 6.14.11.12080. The libraries' N is their own version
// cut to four digits (cublas64_12.dll 12.8.4.1 is 6.14.11.1284, cublas64_13.dll 13.0 6.14.11.1300),
// which names no CUDA. So N dates the DLL when it is a CUDA_VERSION of CUDA 10 or later (five
// digits, ending in 0), and the catalog's major of the DLL's name, where it has one, agrees.
func fromVersionInfo(a Artifact, rec *observe.Recorder) (Answer, string) {
	switch {
	case a.Platform.OS != "windows":
		return Answer{}, "only a Windows DLL has a VS_VERSIONINFO to read"
	case a.Kind == abi.KindHeaderDir:
		return Answer{}, "a directory has no VS_VERSIONINFO"
	}
	if _, err := rec.Stat(a.Path); err != nil {
		return Answer{}, a.Path + ": " + why(err)
	}
	f, _, err := sandboxfs.Open(a.Path)
	if err != nil {
		return Answer{}, a.Path + ": " + why(err)
	}
	defer f.Close()
	vi, err := binfmt.ReadVersionInfo(f)
	if err != nil {
		return Answer{}, fmt.Sprintf("%s: no VS_VERSIONINFO: %v", a.Path, err)
	}
	name := filepath.Base(a.Path)
	for _, v := range versions(vi) {
		n, ok := nvidiaFileVersion(v)
		mm, isCUDA := fromCUDAVersion(n)
		if !ok || !isCUDA || n < 10000 {
			continue
		}
		if major := a.Library.CUDAMajors[name]; major != "" && !strings.HasPrefix(mm, major+".") {
			return Answer{}, fmt.Sprintf("%s: version %s says CUDA %s, the catalog %s: neither is taken", a.Path, v, mm, major)
		}
		return Answer{CUDA: mm, Detail: fmt.Sprintf("%s: VS_VERSIONINFO version %s (CUDA_VERSION %d)", a.Path, v, n)}, ""
	}
	return Answer{}, fmt.Sprintf("%s: VS_VERSIONINFO versions %q name no CUDA (a library's own 6.14.11.1284 names none)", a.Path, versions(vi))
}

// nvidiaFileVersion is N of NVIDIA's 6.14.11.N.
func nvidiaFileVersion(v string) (int, bool) {
	ns, ok := numbers(v)
	if !ok || len(ns) != 4 || ns[0] != 6 || ns[1] != 14 || ns[2] != 11 {
		return 0, false
	}
	return ns[3], true
}

// versions are vi's versions, the fixed ones first, then StringFileInfo's FileVersion and
// ProductVersion, "6,14,11,12080" read as "6.14.11.12080".
func versions(vi binfmt.VersionInfo) []string {
	var out []string
	for _, v := range []string{vi.FileVersion, vi.ProductVersion, vi.Strings["FileVersion"], vi.Strings["ProductVersion"]} {
		v = strings.ReplaceAll(strings.ReplaceAll(v, " ", ""), ",", ".")
		if v != "" {
			out = appendNew(out, v)
		}
	}
	return out
}
