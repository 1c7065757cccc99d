//go:build !linux || pathfinder_static

package driver

import "testing"

func nvmlStubForBench(b *testing.B) string {
	b.Skip("the stub libraries are loaded with purego on Linux only")
	return ""
}

func cudaStubForBench(b *testing.B) string { return nvmlStubForBench(b) }
