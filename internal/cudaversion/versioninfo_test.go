package cudaversion

import (
	"debug/pe"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakepe"
)

func Test_fromVersionInfo(t *testing.T) {
	run(t, fromVersionInfo, []sourceCase{
		{
			name: "the runtime: a CUDA_VERSION", lib: cudart, platform: windows,
			files: map[string]string{"bin/cudart64_12.dll": dll([4]uint16{6, 14, 11, 12080}, "6.14.11.12080")}, path: "bin/cudart64_12.dll",
			cuda: "12.8", detail: "<root>/bin/cudart64_12.dll: VS_VERSIONINFO version 6.14.11.12080 (CUDA_VERSION 12080)",
		},
		{
			name: "the strings when the fixed version is none", lib: cudart, platform: windows,
			files: map[string]string{"bin/cudart64_12.dll": dll([4]uint16{}, "6, 14, 11, 12060")}, path: "bin/cudart64_12.dll",
			cuda: "12.6", detail: "version 6.14.11.12060",
		},
		{
			name: "a library's own version names no CUDA", lib: cublas, platform: windows,
			files: map[string]string{"bin/cublas64_12.dll": dll([4]uint16{6, 14, 11, 1284}, "6.14.11.1284")}, path: "bin/cublas64_12.dll",
			why: `VS_VERSIONINFO versions ["6.14.11.1284"] name no CUDA`,
		},
		{
			name: "a CUDA_VERSION the catalog disagrees with", lib: cudart, platform: windows,
			files: map[string]string{"bin/cudart64_12.dll": dll([4]uint16{6, 14, 11, 13000}, "6.14.11.13000")}, path: "bin/cudart64_12.dll",
			why: "version 6.14.11.13000 says CUDA 13.0, the catalog 12: neither is taken",
		},
		{
			name: "not NVIDIA's scheme", lib: cudnn, platform: windows,
			files: map[string]string{"bin/cudnn64_9.dll": dll([4]uint16{9, 1, 0, 12040}, "9.1.0.12040")}, path: "bin/cudnn64_9.dll",
			why: "name no CUDA",
		},
		{
			name: "a DLL without resources", lib: cudart, platform: windows,
			files: map[string]string{"bin/cudart64_12.dll": string(fakepe.File(pe.IMAGE_FILE_MACHINE_AMD64, true))}, path: "bin/cudart64_12.dll",
			why: "no VS_VERSIONINFO: no resources",
		},
		{
			name: "not a PE", lib: cudart, platform: windows, files: map[string]string{"bin/cudart64_12.dll": "\x7fELF"}, path: "bin/cudart64_12.dll",
			why: "no VS_VERSIONINFO",
		},
		{
			name: "absent", lib: cudart, platform: windows, path: "bin/cudart64_12.dll", why: "<root>/bin/cudart64_12.dll: absent",
		},
		{
			name: "Linux", lib: cudart, files: map[string]string{"lib/libcudart.so.12": "ELF"}, path: "lib/libcudart.so.12",
			why: "only a Windows DLL has a VS_VERSIONINFO to read",
		},
		{
			name: "a header directory", lib: cudartHeaders, platform: windows, kind: abi.KindHeaderDir, path: "include", why: "a directory has no VS_VERSIONINFO",
		},
	})
}
