// Package integration holds pathfinder against NVIDIA's own libraries: CUDA 12.4 and 11.8 and the
// 550 and 535 drivers as Debian ships them, fetched by internal/testutil/realnv/fetch.sh and laid out the way
// pip wheels, conda, the toolkit and the driver install them. It has tests only (realnv_test.go).
package integration
