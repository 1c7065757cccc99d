package main

import "testing"

// TestBuiltinGenIsCurrent: internal/config/builtin_gen.go is what builtin/pathfinder.toml makes.
func TestBuiltinGenIsCurrent(t *testing.T) {
	if err := file.Current(); err != nil {
		t.Fatal(err)
	}
}
