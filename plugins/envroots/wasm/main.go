//go:build wasip1

// Command wasm builds the envroots step as a stand-alone plugin:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o envroots.wasm ./plugins/envroots/wasm
package main

import (
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/envroots"
)

func init() { abi.Register(envroots.Plugin) }

func main() {}
