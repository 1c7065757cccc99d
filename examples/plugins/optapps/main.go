//go:build wasip1

// Command optapps is a site plugin for pathfinder: it finds CUDA toolkits installed side by side under
// /opt/apps/cuda/<version>, newest first. Build it with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o optapps.wasm ./examples/plugins/optapps
//
// and see README.md for the pathfinder.toml that pins and orders it.
package main

import "github.com/pathfinder-dev/pathfinder/abi"

func init() { abi.Register(plugin) }

func main() {}
