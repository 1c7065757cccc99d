package cudaversion

import (
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func Test_fromWheel(t *testing.T) {
	const sp = "venv/lib/python3.12/site-packages"
	runtime12 := installed(sp, "nvidia-cuda-runtime-cu12", "12.4.127", "nvidia/cuda_runtime/lib/libcudart.so.12", "nvidia/cuda_runtime/include/cuda_runtime.h")
	run(t, fromWheel, []sourceCase{
		{
			name: "CUDA 12's runtime wheel", lib: cudart, files: runtime12, path: sp + "/nvidia/cuda_runtime/lib/libcudart.so.12",
			cuda: "12.4", ver: "12.4.127", detail: "<root>/" + sp + "/nvidia_cuda_runtime_cu12-12.4.127.dist-info: nvidia-cuda-runtime-cu12 12.4.127",
		},
		{
			name: "CUDA 13's, under nvidia/cu13", lib: cudart,
			files: installed(sp, "nvidia-cuda-runtime", "13.0.96", "nvidia/cu13/lib/libcudart.so.13"), path: sp + "/nvidia/cu13/lib/libcudart.so.13",
			cuda: "13.0", ver: "13.0.96",
		},
		{
			name: "a library not versioned as its CUDA", lib: cufft,
			files: installed(sp, "nvidia-cufft-cu12", "11.2.1.3", "nvidia/cufft/lib/libcufft.so.11"), path: sp + "/nvidia/cufft/lib/libcufft.so.11",
			cuda: "12", ver: "11.2.1.3",
		},
		{
			name: "the same under nvidia/cu13", lib: cufft,
			files: installed(sp, "nvidia-cufft", "12.0.0.15", "nvidia/cu13/lib/libcufft.so.12"), path: sp + "/nvidia/cu13/lib/libcufft.so.12",
			cuda: "13", ver: "12.0.0.15",
		},
		{
			name: "cuDNN, built for a major its wheel names", lib: cudnn,
			files: installed(sp, "nvidia-cudnn-cu12", "9.1.0.70", "nvidia/cudnn/lib/libcudnn.so.9"), path: sp + "/nvidia/cudnn/lib/libcudnn.so.9",
			cuda: "12", ver: "9.1.0.70",
		},
		{
			name: "a header directory, by a header in it", lib: cudartHeaders, kind: abi.KindHeaderDir,
			files: runtime12, path: sp + "/nvidia/cuda_runtime/include", cuda: "12.4", ver: "12.4.127",
		},
		{
			name: "among other wheels", lib: cudart, path: sp + "/nvidia/cuda_runtime/lib/libcudart.so.12", cuda: "12.4", ver: "12.4.127",
			files: with(runtime12,
				installed(sp, "nvidia-cublas-cu12", "12.4.5.8", "nvidia/cublas/lib/libcublas.so.12"),
				installed(sp, "aaa", "1.0", "aaa/__init__.py"),
				installed(sp, "nvidia-cuda-runtime", "13.0.96", "nvidia/cu13/lib/libcudart.so.13")),
		},
		{
			name: "a quoted path in RECORD", lib: cudart, path: sp + "/nvidia/cuda_runtime/lib/libcudart.so.12", cuda: "12.4", ver: "12.4",
			files: map[string]string{
				sp + "/nvidia/cuda_runtime/lib/libcudart.so.12":          "ELF",
				sp + "/nvidia_cuda_runtime_cu12-12.4.dist-info/METADATA": "Name: nvidia-cuda-runtime-cu12\nVersion: 12.4\n",
				sp + "/nvidia_cuda_runtime_cu12-12.4.dist-info/RECORD":   "\"nvidia/cuda_runtime/lib/libcudart.so.12\",sha256=x,3\n",
			},
		},
		{
			name: "listed by no RECORD", lib: cudart, path: sp + "/nvidia/cuda_runtime/lib/libcudart.so.12",
			files: with(installed(sp, "nvidia-cublas-cu12", "12.4.5.8", "nvidia/cublas/lib/libcublas.so.12"), map[string]string{sp + "/nvidia/cuda_runtime/lib/libcudart.so.12": "ELF"}),
			why:   "no RECORD of the 1 likeliest *.dist-info in <root>/" + sp + " lists nvidia/cuda_runtime/lib/libcudart.so.12",
		},
		{
			name: "a name in RECORD's hash is no listing", lib: cudart, path: sp + "/nvidia/cuda_runtime/lib/libcudart.so.12",
			files: map[string]string{
				sp + "/nvidia/cuda_runtime/lib/libcudart.so.12":          "ELF",
				sp + "/nvidia_cuda_runtime_cu12-12.4.dist-info/METADATA": "Name: nvidia-cuda-runtime-cu12\nVersion: 12.4\n",
				sp + "/nvidia_cuda_runtime_cu12-12.4.dist-info/RECORD":   "other,nvidia/cuda_runtime/lib/libcudart.so.12,3\n",
			},
			why: "no RECORD of the 1 likeliest",
		},
		{
			name: "no site-packages of the descriptor's", lib: cudart, files: map[string]string{"opt/x/lib/libcudart.so.12": "ELF"}, path: "opt/x/lib/libcudart.so.12",
			why: "<root>/opt/x/lib is in none of cudart's site-packages directories",
		},
		{
			name: "a METADATA without a version", lib: cudart, path: sp + "/nvidia/cuda_runtime/lib/libcudart.so.12",
			files: with(runtime12, map[string]string{sp + "/nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA": "Name: nvidia-cuda-runtime-cu12\n"}),
			why:   "nvidia_cuda_runtime_cu12-12.4.127.dist-info lists nvidia/cuda_runtime/lib/libcudart.so.12, but its METADATA: no Name and Version",
		},
		{
			name: "a wheel whose name says no CUDA", lib: cudnn, path: sp + "/nvidia/cudnn/lib/libcudnn.so.9",
			files: installed(sp, "bundler", "2.4.0", "nvidia/cudnn/lib/libcudnn.so.9"),
			why:   "bundler 2.4.0 names no CUDA major",
		},
		{
			name: "cupti's file name is no CUDA version, its wheel's is", lib: cupti, path: sp + "/nvidia/cuda_cupti/lib/libcupti.so.12",
			files: installed(sp, "nvidia-cuda-cupti-cu12", "12.4.127", "nvidia/cuda_cupti/lib/libcupti.so.12"),
			cuda:  "12.4", ver: "12.4.127",
		},
	})
}

func Test_cuMajor(t *testing.T) {
	for s, want := range map[string]string{"nvidia-cudnn-cu12": "12", "nvidia-cuda-runtime": "", "nvidia-nccl-cu13": "13", "x-cu012": "", "x-cu": "", "nvidia-cuda-cupti-cu12x": ""} {
		if got := cuMajor(s, "-"); got != want {
			t.Errorf("cuMajor(%q, -) = %q, want %q", s, got, want)
		}
	}
	for s, want := range map[string]string{"cu13": "13", "cuda_runtime": "", "cu": "", "xcu13": ""} {
		if got := cuMajor(s, ""); got != want {
			t.Errorf("cuMajor(%q) = %q, want %q", s, got, want)
		}
	}
}
