package main

import "testing"

// TestBuiltinGenIsCurrent: internal/catalog/builtin_gen.go is what builtin/packs/nvidia.toml makes.
func TestBuiltinGenIsCurrent(t *testing.T) {
	if err := file.Current(); err != nil {
		t.Fatal(err)
	}
}
