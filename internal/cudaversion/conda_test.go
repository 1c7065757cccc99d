package cudaversion

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// condaRecord is conda's record of an installed package, conda-meta/<name>-<version>-<build>.json,
// with the fields conda writes (name, version, build, channel, depends, files, …).
func condaRecord(prefix, name, version string, depends []string, files ...string) map[string]string {
	data, _ := json.MarshalIndent(map[string]any{
		"build": "h0_2", "build_number": 2, "channel": "https://conda.anaconda.org/conda-forge/linux-64",
		"constrains": []string{}, "depends": depends, "files": files, "license": "LicenseRef-NVIDIA-End-User-License-Agreement",
		"name": name, "subdir": "linux-64", "version": version,
	}, "", "  ")
	out := map[string]string{fmt.Sprintf("%s/conda-meta/%s-%s-h0_2.json", prefix, name, version): string(data)}
	for _, f := range files {
		out[prefix+"/"+f] = "ELF"
	}
	return out
}

func Test_fromConda(t *testing.T) {
	glibc := "__glibc >=2.17,<3.0.a0"
	cudart124 := condaRecord("env", "cuda-cudart", "12.4.127", []string{glibc, "cuda-cudart_linux-64 12.4.127 h85509e4_2", "cuda-version >=12.4,<12.5.0a0", "libgcc-ng >=12"},
		"lib/libcudart.so.12", "targets/x86_64-linux/include/cuda_runtime.h")
	run(t, fromConda, []sourceCase{
		{
			name: "conda-forge's cudart", lib: cudart, files: with(cudart124, condaRecord("env", "libgcc-ng", "14.1.0", nil, "lib/libgcc_s.so.1")),
			path: "env/lib/libcudart.so.12", cuda: "12.4", ver: "12.4.127", detail: "<root>/env/conda-meta/cuda-cudart-12.4.127-h0_2.json: cuda-cudart 12.4.127",
		},
		{
			name: "cuDNN, built for a major", lib: cudnn, path: "env/lib/libcudnn.so.9", cuda: "12", ver: "9.1.1.17",
			files: condaRecord("env", "cudnn", "9.1.1.17", []string{"cuda-nvrtc", "cuda-version >=12,<13.0a0", "libcublas"}, "lib/libcudnn.so.9"),
		},
		{
			name: "a release's package names its minor", lib: cufft, path: "env/lib/libcufft.so.11", cuda: "12.4", ver: "11.2.1.3",
			files: condaRecord("env", "libcufft", "11.2.1.3", []string{"cuda-version >=12.4,<12.5.0a0"}, "lib/libcufft.so.11"),
		},
		{
			name: "CUDA 11's cudatoolkit", lib: cudart, path: "env/lib/libcudart.so.11.0", cuda: "11.8", ver: "11.8.0",
			files: condaRecord("env", "cudatoolkit", "11.8.0", []string{"__glibc >=2.17,<3.0.a0"}, "lib/libcudart.so.11.0"),
		},
		{
			name: "no cuda-version: the catalog's major", lib: cufft, path: "env/lib/libcufft.so.11", cuda: "12", ver: "11.2.1.3",
			files: condaRecord("env", "libcufft", "11.2.1.3", nil, "lib/libcufft.so.11"),
		},
		{
			name: "a header directory", lib: cudartHeaders, kind: abi.KindHeaderDir, files: cudart124,
			path: "env/targets/x86_64-linux/include", cuda: "12.4", ver: "12.4.127",
		},
		{
			name: "listed by the file its link leads to", lib: cudart, path: "env/lib/libcudart.so.12", real: "env/targets/x86_64-linux/lib/libcudart.so.12.4.127",
			files: with(condaRecord("env", "cuda-cudart_linux-64", "12.4.127", []string{"cuda-version >=12.4,<12.5.0a0"}, "targets/x86_64-linux/lib/libcudart.so.12.4.127"),
				map[string]string{"env/lib/libcudart.so.12": "-> ../targets/x86_64-linux/lib/libcudart.so.12.4.127"}),
			cuda: "12.4", ver: "12.4.127",
		},
		{
			name: "no conda-meta", lib: cudart, files: map[string]string{"opt/cuda/lib64/libcudart.so.12": "ELF"}, path: "opt/cuda/lib64/libcudart.so.12",
			why: "<root>/opt/cuda/conda-meta: absent",
		},
		{
			name: "a garbage record is passed over", lib: cudart, path: "env/lib/libcudart.so.12",
			files: map[string]string{"env/lib/libcudart.so.12": "ELF", "env/conda-meta/cuda-cudart-12.4.127-0.json": `{"files": ["lib/libcudart.so.12"], "name": `},
			why:   "no record of the 1 likeliest in <root>/env/conda-meta lists lib/libcudart.so.12",
		},
		{
			name: "a record that names no CUDA", lib: cudnn, path: "env/lib/libcudnn.so.9",
			files: condaRecord("env", "cudnn", "9.1.1.17", []string{"cuda-version >=12.4,<13.5"}, "lib/libcudnn.so.9"),
			why:   "cudnn 9.1.1.17 lists lib/libcudnn.so.9 but names no CUDA",
		},
	})
}

func Test_cudaVersionSpec(t *testing.T) {
	for spec, want := range map[string]string{
		">=12.4,<12.5.0a0": "12.4", ">=12,<13.0a0": "12", ">=12.6,<13": "12", ">=11.2,<12.0a0": "11", ">=13.0,<13.1.0a0": "13.0",
		"12.4.*": "12.4", "12.4": "12.4", "12.*": "12", "==12.4": "12.4",
		">=12.4,<13.5": "", ">=12.4": "", "<13": "", ">=12.4,<=12.5": "", ">=12.4,<12.6": "", "": "", "12.4.1": "", ">=x,<y": "", ">=12.4,<12.5,>=1": "",
	} {
		if got := cudaVersionSpec(spec); got != want {
			t.Errorf("cudaVersionSpec(%q) = %q, want %q", spec, got, want)
		}
	}
}

func Test_condaCUDA(t *testing.T) {
	tests := []struct {
		depends []string
		want    string
	}{
		{[]string{"cuda-version >=12,<13.0a0", "cuda-version >=12.6,<13"}, "12"},
		{[]string{"cuda-version >=12,<13.0a0", "cuda-version >=12.4,<12.5.0a0"}, "12.4"},
		{[]string{"cuda-version >=12.4,<12.5.0a0", "cuda-version >=12,<13.0a0"}, "12.4"},
		{[]string{"cuda-version >=12.4,<12.5.0a0", "cuda-version >=13,<14.0a0"}, ""},
		{[]string{"cuda-versioned 12.4", "libcublas"}, ""},
		{[]string{"cuda-version  >=12.4, <12.5.0a0"}, "12.4"},
	}
	for _, tt := range tests {
		if got := condaCUDA(tt.depends); got != tt.want {
			t.Errorf("condaCUDA(%q) = %q, want %q", tt.depends, got, tt.want)
		}
	}
}
