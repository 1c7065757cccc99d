package cudaversion

import (
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func Test_fromFileName(t *testing.T) {
	soname := func(name, real string) map[string]string {
		return map[string]string{"lib/" + real: "ELF", "lib/" + name: "-> " + real}
	}
	run(t, fromFileName, []sourceCase{
		{
			name: "versioned as its CUDA", lib: cudart, files: soname("libcudart.so.12", "libcudart.so.12.4.127"),
			path: "lib/libcudart.so.12", real: "lib/libcudart.so.12.4.127", cuda: "12.4", ver: "12.4.127",
			detail: "<root>/lib/libcudart.so.12.4.127: version 12.4.127 of libcudart.so.12",
		},
		{
			name: "a version that is the library's own", lib: cufft, files: soname("libcufft.so.11", "libcufft.so.11.2.1.3"),
			path: "lib/libcufft.so.11", real: "lib/libcufft.so.11.2.1.3", cuda: "12", ver: "11.2.1.3",
		},
		{
			name: "a version of another scheme", lib: cupti, files: soname("libcupti.so.12", "libcupti.so.2024.1.1"),
			path: "lib/libcupti.so.12", real: "lib/libcupti.so.2024.1.1", cuda: "12", ver: "2024.1.1",
		},
		{
			name: "found by its full name", lib: cufft, files: map[string]string{"lib/libcufft.so.12.0.0.15": "ELF"},
			path: "lib/libcufft.so.12.0.0.15", cuda: "13", ver: "12.0.0.15",
		},
		{
			name: "a full name two sonames share", lib: cupti, files: map[string]string{"lib/libcupti.so.2025.3.1": "ELF"},
			path: "lib/libcupti.so.2025.3.1", why: "libcupti.so.2025.3.1 is no declared soname with a full version",
		},
		{
			name: "the soname the file's name extends, not the one it was found by", lib: cudart, files: soname("libcudart.so.12", "libcudart.so.13.0.48"),
			path: "lib/libcudart.so.12", real: "lib/libcudart.so.13.0.48", cuda: "13.0", ver: "13.0.48", detail: "version 13.0.48 of libcudart.so.13",
		},
		{
			name: "a catalog that disagrees keeps its major", lib: &abi.Descriptor{LinuxSonames: []string{"libx.so.2"}, CUDAMajors: map[string]string{"libx.so.2": "13"}, VersionedAsCUDA: true},
			files: soname("libx.so.2", "libx.so.2.4.1"), path: "lib/libx.so.2", real: "lib/libx.so.2.4.1", cuda: "13", ver: "2.4.1",
		},
		{
			name: "no major declared", lib: nvvm, files: soname("libnvvm.so.4", "libnvvm.so.4.0.0"),
			path: "lib/libnvvm.so.4", real: "lib/libnvvm.so.4.0.0", why: "libnvvm.so.4.0.0 is version 4.0.0, but no CUDA major is declared for libnvvm.so.4",
		},
		{
			name: "only a soname", lib: cudart, files: map[string]string{"lib/libcudart.so.12": "ELF"}, path: "lib/libcudart.so.12",
			why: "libcudart.so.12 is no declared soname with a full version (libcudart.so.12.4.127)",
		},
		{
			name: "no full version", lib: cudart, files: soname("libcudart.so.12", "libcudart.so.12.4"),
			path: "lib/libcudart.so.12", real: "lib/libcudart.so.12.4", why: "libcudart.so.12.4 is no declared soname",
		},
		{
			name: "not a version", lib: cudart, files: soname("libcudart.so.12", "libcudart.so.12.4.127.bak"),
			path: "lib/libcudart.so.12", real: "lib/libcudart.so.12.4.127.bak", why: "is no declared soname",
		},
		{
			name: "a DLL's name has no version", lib: cudart, platform: windows, files: map[string]string{"bin/cudart64_12.dll": "MZ"},
			path: "bin/cudart64_12.dll", why: "cudart64_12.dll is no declared soname",
		},
	})
}

func Test_fromCatalog(t *testing.T) {
	run(t, fromCatalog, []sourceCase{
		{name: "a mapped soname", lib: cufft, path: "lib/libcufft.so.12", cuda: "13", detail: "the catalog: libcufft.so.12 is CUDA 13's"},
		{name: "a mapped DLL", lib: cudart, platform: windows, path: "bin/cudart64_12.dll", cuda: "12"},
		{name: "an unmapped soname", lib: cudnn, path: "lib/libcudnn.so.9", why: "the catalog gives no CUDA major for libcudnn.so.9"},
		{name: "a header directory", lib: cudartHeaders, kind: abi.KindHeaderDir, path: "include", why: "this is a directory"},
	})
}
