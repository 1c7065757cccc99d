//go:build wasip1

// Command steps is the builtin module: every first-party search step linked into one wasm module, so a
// process compiles and loads one module instead of one per step. Each step still runs in its own
// instance with its own grants; the request's entry picks the step. Built by `go generate ./builtin`.
package main

import (
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/canary"
	"github.com/pathfinder-dev/pathfinder/plugins/conda"
	"github.com/pathfinder-dev/pathfinder/plugins/envroots"
	"github.com/pathfinder-dev/pathfinder/plugins/programfiles"
	"github.com/pathfinder-dev/pathfinder/plugins/wheels"
)

func init() {
	abi.Register(canary.Plugin)
	abi.Register(conda.Plugin)
	abi.Register(envroots.Plugin)
	abi.Register(programfiles.Plugin)
	abi.Register(wheels.Plugin)
}

func main() {}
