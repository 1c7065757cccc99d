//go:build wasip1

// Command wasm builds the canary step as a stand-alone plugin:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o canary.wasm ./plugins/canary/wasm
package main

import (
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/canary"
)

func init() { abi.Register(canary.Plugin) }

func main() {}
