//go:build wasip1

// Command wasm builds the conda step as a stand-alone plugin:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o conda.wasm ./plugins/conda/wasm
package main

import (
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/conda"
)

func init() { abi.Register(conda.Plugin) }

func main() {}
