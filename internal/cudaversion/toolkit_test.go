package cudaversion

import (
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func Test_fromToolkit(t *testing.T) {
	run(t, fromToolkit, []sourceCase{
		{
			name: "version.json, through lib64 and targets", lib: cudart,
			files: map[string]string{
				"cuda-12.4/version.json": versionJSON124, "cuda-12.4/lib64": "-> targets/x86_64-linux/lib",
				"cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12.4.127": "ELF",
				"cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12":       "-> libcudart.so.12.4.127",
			},
			path: "cuda-12.4/lib64/libcudart.so.12", real: "cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12.4.127",
			cuda: "12.4", ver: "12.4.127", detail: "<root>/cuda-12.4/version.json: CUDA 12.4.1, cuda_cudart 12.4.127",
		},
		{
			name: "a targets root's cuda.h", lib: cudart,
			files: map[string]string{"cuda/targets/x86_64-linux/include/cuda.h": cudaH124, "cuda/targets/x86_64-linux/lib/libcudart.so.12": "ELF"},
			path:  "cuda/targets/x86_64-linux/lib/libcudart.so.12",
			cuda:  "12.4", detail: "<root>/cuda/targets/x86_64-linux/include/cuda.h: CUDA_VERSION 12040",
		},
		{
			name: "version.json before the targets root's cuda.h", lib: cufft,
			files: map[string]string{"cuda/version.json": versionJSON124, "cuda/targets/x86_64-linux/include/cuda.h": "#define CUDA_VERSION 11080\n", "cuda/targets/x86_64-linux/lib/libcufft.so.11": "ELF"},
			path:  "cuda/targets/x86_64-linux/lib/libcufft.so.11",
			cuda:  "12.4", ver: "11.2.1.3", detail: "libcufft 11.2.1.3",
		},
		{
			name: "a header directory", lib: cudartHeaders, kind: abi.KindHeaderDir,
			files: map[string]string{"cuda/version.json": versionJSON124, "cuda/include/cuda_runtime.h": ""},
			path:  "cuda/include", cuda: "12.4", ver: "12.4.127",
		},
		{
			name: "cccl's headers", lib: &abi.Descriptor{Name: "cccl", LinuxFiles: []string{"cuda/std/version"}}, kind: abi.KindHeaderDir,
			files: map[string]string{"cuda/include/cuda.h": cudaH124, "cuda/include/cccl/cuda/std/version": ""},
			path:  "cuda/include/cccl", cuda: "12.4",
		},
		{
			name: "nvcc in bin", lib: nvcc, kind: abi.KindBinary,
			files: map[string]string{"cuda/version.json": versionJSON124, "cuda/bin/nvcc": "ELF"},
			path:  "cuda/bin/nvcc", cuda: "12.4", ver: "12.4.131", detail: "cuda_nvcc 12.4.131",
		},
		{
			name: "libdevice, with no component of its name", lib: libdevice, kind: abi.KindBitcode,
			files: map[string]string{"cuda/version.json": versionJSON124, "cuda/nvvm/libdevice/libdevice.10.bc": "BC"},
			path:  "cuda/nvvm/libdevice/libdevice.10.bc", cuda: "12.4",
		},
		{
			name: "nvvm in nvvm/lib64", lib: nvvm,
			files: map[string]string{"cuda/version.json": versionJSON124, "cuda/nvvm/lib64/libnvvm.so.4": "ELF"},
			path:  "cuda/nvvm/lib64/libnvvm.so.4", cuda: "12.4",
		},
		{
			name: "a Windows toolkit's bin/x64", lib: cudart, platform: windows,
			files: map[string]string{"CUDA/v13.0/version.json": `{"cuda": {"name": "CUDA SDK", "version": "13.0.2"}}`, "CUDA/v13.0/bin/x64/cudart64_13.dll": "MZ"},
			path:  "CUDA/v13.0/bin/x64/cudart64_13.dll", cuda: "13.0",
		},
		{
			name: "a date for the patch", lib: cudart,
			files: map[string]string{"cuda/version.json": `{"cuda": {"name": "CUDA SDK", "version": "12.6.20241114"}}`, "cuda/lib64/libcudart.so.12": "ELF"},
			path:  "cuda/lib64/libcudart.so.12", cuda: "12.6", detail: "CUDA 12.6.20241114",
		},
		{
			name: "Debian's multiarch directory is no toolkit", lib: cudart,
			files: map[string]string{"usr/include/cuda.h": cudaH124, "usr/lib/x86_64-linux-gnu/libcudart.so.12": "ELF"},
			path:  "usr/lib/x86_64-linux-gnu/libcudart.so.12", why: "<root>/usr/lib/x86_64-linux-gnu lie in no toolkit root's layout",
		},
		{
			name: "CUDA 13's wheels are no toolkit", lib: cudart,
			files: map[string]string{"venv/lib/python3.12/site-packages/nvidia/cu13/include/cuda.h": cudaH124, "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13": "ELF"},
			path:  "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13", why: "/nvidia/cu13/lib lie in site-packages: a wheel's, not a toolkit's",
		},
		{
			name: "a toolkit root that says nothing", lib: cudart,
			files: map[string]string{"cuda/lib64/libcudart.so.12": "ELF"},
			path:  "cuda/lib64/libcudart.so.12", why: "<root>/cuda/version.json: absent; <root>/cuda/include/cuda.h: absent",
		},
		{
			name: "garbage version.json, then cuda.h", lib: cudart,
			files: map[string]string{"cuda/version.json": "{\"cuda\": [", "cuda/include/cuda.h": cudaH124, "cuda/lib64/libcudart.so.12": "ELF"},
			path:  "cuda/lib64/libcudart.so.12", cuda: "12.4", detail: "cuda.h: CUDA_VERSION 12040",
		},
		{
			name: "garbage everywhere", lib: cudart,
			files: map[string]string{"cuda/version.json": "\x00\xff", "cuda/include/cuda.h": "#define CUDA_VERSION 12041\n", "cuda/lib64/libcudart.so.12": "ELF"},
			path:  "cuda/lib64/libcudart.so.12", why: "version.json: not JSON",
		},
		{
			name: "no version in version.json", lib: cudart,
			files: map[string]string{"cuda/version.json": `{"cuda": {"version": "twelve"}}`, "cuda/lib64/libcudart.so.12": "ELF"},
			path:  "cuda/lib64/libcudart.so.12", why: `no CUDA version in "cuda" ("twelve")`,
		},
		{
			name: "a CUDA_VERSION that is none", lib: cudart,
			files: map[string]string{"cuda/include/cuda.h": "#define CUDA_VERSION 12041\n", "cuda/lib64/libcudart.so.12": "ELF"},
			path:  "cuda/lib64/libcudart.so.12", why: `CUDA_VERSION "12041" is no CUDA_VERSION`,
		},
		{
			name: "a version.json too large to read", lib: cudart,
			files: map[string]string{"cuda/version.json": `{"cuda": {"version": "12.4.1"}, "pad": "` + strings.Repeat("x", maxVersionJSON) + `"}`, "cuda/lib64/libcudart.so.12": "ELF"},
			path:  "cuda/lib64/libcudart.so.12", why: "version.json: larger than 1048576 bytes",
		},
		{
			name: "version.json is a directory", lib: cudart,
			files: map[string]string{"cuda/version.json": "dir", "cuda/lib64/libcudart.so.12": "ELF"},
			path:  "cuda/lib64/libcudart.so.12", why: "version.json: a directory",
		},
	})
}
