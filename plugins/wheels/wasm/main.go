//go:build wasip1

// Command wasm builds the wheels step as a stand-alone plugin:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o wheels.wasm ./plugins/wheels/wasm
package main

import (
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/wheels"
)

func init() { abi.Register(wheels.Plugin) }

func main() {}
