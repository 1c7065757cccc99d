package cudaversion

import (
	"debug/pe"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakepe"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// Descriptors as the builtin pack declares them, cut to what the sources read.
var (
	linux   = abi.Platform{OS: "linux", Arch: "amd64"}
	windows = abi.Platform{OS: "windows", Arch: "amd64"}

	cudart = &abi.Descriptor{
		Name: "cudart", PackagedWith: "ctk",
		LinuxSonames: []string{"libcudart.so.13", "libcudart.so.12"}, WindowsDLLs: []string{"cudart64_13.dll", "cudart64_12.dll"},
		SitePackagesLinux:   []string{"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"},
		SitePackagesWindows: []string{"nvidia/cu13/bin/x86_64", "nvidia/cuda_runtime/bin"},
		AnchorRelDirsLinux:  []string{"lib64", "lib"}, AnchorRelDirsWindows: []string{"bin/{triple}", "bin"},
		CUDAMajors: map[string]string{
			"libcudart.so.13": "13", "libcudart.so.12": "12", "cudart64_13.dll": "13", "cudart64_12.dll": "12",
		},
		VersionedAsCUDA: true,
	}
	cufft = &abi.Descriptor{
		Name: "cufft", PackagedWith: "ctk",
		LinuxSonames: []string{"libcufft.so.12", "libcufft.so.11"}, SitePackagesLinux: []string{"nvidia/cu13/lib", "nvidia/cufft/lib"},
		AnchorRelDirsLinux: []string{"lib64", "lib"},
		CUDAMajors:         map[string]string{"libcufft.so.12": "13", "libcufft.so.11": "12"},
	}
	cublas = &abi.Descriptor{
		Name: "cublas", PackagedWith: "ctk", WindowsDLLs: []string{"cublas64_13.dll", "cublas64_12.dll"},
		CUDAMajors: map[string]string{"cublas64_13.dll": "13", "cublas64_12.dll": "12"},
	}
	cupti = &abi.Descriptor{
		Name: "cupti", PackagedWith: "ctk", LinuxSonames: []string{"libcupti.so.13", "libcupti.so.12"},
		SitePackagesLinux: []string{"nvidia/cu13/lib", "nvidia/cuda_cupti/lib"},
		CUDAMajors:        map[string]string{"libcupti.so.13": "13", "libcupti.so.12": "12"},
		VersionedAsCUDA:   true,
	}
	nvvm = &abi.Descriptor{
		Name: "nvvm", PackagedWith: "ctk", LinuxSonames: []string{"libnvvm.so.4", "libnvvm.so"},
		SitePackagesLinux: []string{"nvidia/cu13/lib", "nvidia/cuda_nvcc/nvvm/lib64"}, AnchorRelDirsLinux: []string{"nvvm/lib64"},
	}
	cudnn = &abi.Descriptor{
		Name: "cudnn", PackagedWith: "other", LinuxSonames: []string{"libcudnn.so.9"},
		SitePackagesLinux: []string{"nvidia/cudnn/lib"}, AnchorRelDirsLinux: []string{"lib64", "lib"},
	}
	cudartHeaders = &abi.Descriptor{
		Name: "cudart", PackagedWith: "ctk", LinuxFiles: []string{"cuda_runtime.h"},
		SitePackagesLinux:  []string{"nvidia/cu13/include", "nvidia/cuda_runtime/include"},
		AnchorRelDirsLinux: []string{"include", "targets/{triple}/include"},
		CondaRelDirsLinux:  []string{"targets/{triple}/include", "include"},
		VersionedAsCUDA:    true,
	}
	nvcc = &abi.Descriptor{
		Name: "nvcc", PackagedWith: "ctk", LinuxFiles: []string{"nvcc"}, SitePackagesLinux: []string{"nvidia/cu13/bin", "nvidia/cuda_nvcc/bin"},
		AnchorRelDirsLinux: []string{"bin"}, CondaRelDirsLinux: []string{"bin"}, VersionedAsCUDA: true,
	}
	libdevice = &abi.Descriptor{
		Name: "device", PackagedWith: "ctk", LinuxFiles: []string{"libdevice.10.bc"},
		AnchorRelDirsLinux: []string{"nvvm/libdevice"}, CondaRelDirsLinux: []string{"nvvm/libdevice"},
	}
)

// sourceCase is one source asked about one tree: the artifact's paths are relative to the tree.
type sourceCase struct {
	name        string
	files       map[string]string
	path, real  string
	kind        abi.Kind
	lib         *abi.Descriptor
	platform    abi.Platform
	cuda, ver   string // the answer wanted; cuda "" for none
	detail, why string // what its Detail (or, for none, the reason) must hold; "<root>" is the tree
}

// run asks ask about each case, on a tree of its own.
func run(t *testing.T, ask func(Artifact, *observe.Recorder) (Answer, string), cases []sourceCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			root := filetree.New(t, tt.files)
			a := Artifact{Path: filepath.Join(root, filepath.FromSlash(tt.path)), Kind: tt.kind, Library: tt.lib, Platform: tt.platform}
			if tt.real != "" {
				a.Real = filepath.Join(root, filepath.FromSlash(tt.real))
			}
			if a.Kind == "" {
				a.Kind = abi.KindDynamicLib
			}
			if a.Platform.OS == "" {
				a.Platform = linux
			}
			got, why := ask(a, &observe.Recorder{})
			wantText := strings.ReplaceAll(tt.detail+tt.why, "<root>", root)
			text := got.Detail
			if tt.cuda == "" {
				text = why
			}
			if got.CUDA != tt.cuda || got.Version != tt.ver || !strings.Contains(text, wantText) || (got.CUDA == "") == (why == "") {
				t.Errorf("got CUDA %q version %q detail %q, why %q;\nwant CUDA %q version %q, text holding %q", got.CUDA, got.Version, got.Detail, why, tt.cuda, tt.ver, wantText)
			}
		})
	}
}

// versionJSON124 is the head of CUDA 12.4.1's version.json, as the toolkit installs it.
const versionJSON124 = `{
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "12.4.1"
   },
   "cuda_cudart" : {
      "name" : "CUDA Runtime (cudart)",
      "version" : "12.4.127"
   },
   "cuda_nvcc" : {
      "name" : "CUDA NVCC",
      "version" : "12.4.131"
   },
   "libcufft" : {
      "name" : "CUDA cuFFT",
      "version" : "11.2.1.3"
   }
}
`

// cudaH124 is the part of CUDA 12.4's include/cuda.h that names its version.
const cudaH124 = "#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n\n#include <stdlib.h>\n\n/**\n * CUDA API version number\n */\n#define CUDA_VERSION 12040\n"

// dll is a DLL whose VS_VERSIONINFO holds file version v, fixed and as its FileVersion and
// ProductVersion strings, as NVIDIA's carry them.
func dll(v [4]uint16, text string) string {
	return string(fakepe.DLLWithVersion(pe.IMAGE_FILE_MACHINE_AMD64, fakepe.VersionInfo{
		FileVersion: v, ProductVersion: v,
		Strings: map[string]string{"CompanyName": "NVIDIA Corporation", "FileVersion": text, "ProductVersion": text},
	}))
}

// installed is what pip leaves in site-packages for a wheel called name at version that installs
// files: the files, and its dist-info's METADATA and RECORD (PEP 627), as NVIDIA's wheels have them.
func installed(site, name, version string, files ...string) map[string]string {
	info := strings.NewReplacer("-", "_").Replace(name) + "-" + version + ".dist-info"
	out := map[string]string{
		site + "/" + info + "/METADATA": fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: CUDA native libraries\nLicense: NVIDIA Proprietary Software\nRequires-Python: >=3\n\nName: not-a-header\n", name, version),
	}
	var record strings.Builder
	for _, f := range files {
		out[site+"/"+f] = "ELF"
		fmt.Fprintf(&record, "%s,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,3\n", f)
	}
	fmt.Fprintf(&record, "%s/METADATA,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,200\n%[1]s/RECORD,,\n", info)
	out[site+"/"+info+"/RECORD"] = record.String()
	return out
}

// with is the union of trees.
func with(trees ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, t := range trees {
		maps.Copy(out, t)
	}
	return out
}
