//go:build !linux

package main

import (
	"context"
	"runtime"
)

func askCUDA(context.Context) cudaAnswer {
	return cudaAnswer{Devices: []cudaDevice{}, Error: "asking libcuda is written for Linux, not " + runtime.GOOS}
}
