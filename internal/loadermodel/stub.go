package loadermodel

import (
	"slices"
	"strings"
)

// IsStub reports whether p, a slash-separated path, is under a stubs/ directory: one of the CUDA
// toolkit's libraries for linking only. The loader would load it, and every call into it fails
// (CUDA_ERROR_STUB_LIBRARY).
func IsStub(p string) bool { return slices.Contains(strings.Split(p, "/"), "stubs") }
