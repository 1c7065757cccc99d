//go:build wasip1

// Command wasm builds the programfiles step as a stand-alone plugin:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o programfiles.wasm ./plugins/programfiles/wasm
package main

import (
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/programfiles"
)

func init() { abi.Register(programfiles.Plugin) }

func main() {}
