package abi

import "testing"

func TestToolkitRoot(t *testing.T) {
	tests := []struct {
		path, root string
		ok         bool
	}{
		{"/usr/local/cuda-12.8/lib64/libcudart.so.12", "/usr/local/cuda-12.8", true},
		{"/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13", "/usr/local/cuda", true},
		{"/opt/conda/targets/sbsa-linux/lib64/libcudart.so.13", "/opt/conda", true},
		{"/opt/conda/lib/libcudart.so.12", "/opt/conda", true},
		{"/c/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.0/bin/x64/cudart64_13.dll", "/c/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.0", true},
		{"/cuda/bin/cudart64_12.dll", "/cuda", true},
		{"/usr/lib/x86_64-linux-gnu/libcudart.so.12", "", false},
		{"/lib/libcudart.so.12", "", false},
	}
	for _, tt := range tests {
		root, ok := ToolkitRoot(tt.path)
		if root != tt.root || ok != tt.ok {
			t.Errorf("ToolkitRoot(%q) = %q, %v; want %q, %v", tt.path, root, ok, tt.root, tt.ok)
		}
	}
}
