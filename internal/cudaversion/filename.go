package cudaversion

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// fromFileName dates a by the name of the file its links lead to, where that name is a declared
// soname's with a full version: libcudart.so.12.4.127 is version 12.4.127, and CUDA 12.4 where the
// library is versioned as its CUDA; libcufft.so.11.2.1.3 is version 11.2.1.3 of CUDA 12 (the
// catalog's major of libcufft.so.11); libcupti.so.2024.1.1 is version 2024.1.1, its CUDA the
// catalog's major of libcupti.so.12, the soname it was found by.
func fromFileName(a Artifact, _ *observe.Recorder) (Answer, string) {
	file := a.Real
	if file == "" {
		file = a.Path
	}
	name := filepath.Base(file)
	declared, version := versionedName(a.Library.FileNames(a.Platform), filepath.Base(a.Path), name)
	if version == "" {
		return Answer{}, name + " is no declared soname with a full version (libcudart.so.12.4.127)"
	}
	mapped := a.Library.CUDAMajors[declared]
	cuda := mapped
	// Where name extends the soname, the version is the soname's own (12.4.127 of libcudart.so.12):
	// a library versioned as its CUDA then gives the major.minor, where the catalog's major agrees.
	if mm, ok := majorMinor(version); ok && a.Library.VersionedAsCUDA && strings.HasPrefix(name, declared+".") &&
		(mapped == "" || strings.HasPrefix(mm, mapped+".")) {
		cuda = mm
	}
	if cuda == "" {
		return Answer{}, fmt.Sprintf("%s is version %s, but no CUDA major is declared for %s", name, version, declared)
	}
	return Answer{CUDA: cuda, Version: version, Detail: fmt.Sprintf("%s: version %s of %s", file, version, declared)}, ""
}

// versionedName finds the declared name that name versions fully, and that version: the declared
// name that name extends (libcudart.so.12 for libcudart.so.12.4.127), else the name it was found
// by (asFound), else the one declared name of the same stem (libcupti.so.) when only one has it:
// libcupti.so.2024.1.1 extends neither libcupti.so.13 nor libcupti.so.12.
func versionedName(declared []string, asFound, name string) (string, string) {
	version := func(d string) string {
		stem := soStem(d)
		if v := strings.TrimPrefix(name, stem); stem != "" && v != name {
			if ns, ok := numbers(v); ok && len(ns) >= 3 {
				return v
			}
		}
		return ""
	}
	var same []string
	for _, d := range declared {
		if v := version(d); v != "" && strings.HasPrefix(name, d+".") {
			return d, v
		} else if v != "" {
			same = append(same, d)
		}
	}
	switch {
	case slices.Contains(same, asFound):
		return asFound, version(asFound)
	case len(same) == 1:
		return same[0], version(same[0])
	}
	return "", ""
}

// soStem is a soname up to its version: "libcudart.so." of libcudart.so.12; "" for a name without
// one (a DLL).
func soStem(soname string) string {
	if i := strings.Index(soname, ".so."); i >= 0 {
		return soname[:i+len(".so.")]
	}
	return ""
}

// fromCatalog dates a by the descriptor's mapping of the declared name it was found by to its CUDA
// major: libcufft.so.12 is CUDA 13's.
func fromCatalog(a Artifact, _ *observe.Recorder) (Answer, string) {
	if a.Kind == abi.KindHeaderDir {
		return Answer{}, "the catalog maps file names, and this is a directory"
	}
	name := filepath.Base(a.Path)
	if major := a.Library.CUDAMajors[name]; major != "" {
		return Answer{CUDA: major, Detail: fmt.Sprintf("the catalog: %s is CUDA %s's", name, major)}, ""
	}
	return Answer{}, fmt.Sprintf("the catalog gives no CUDA major for %s", name)
}
