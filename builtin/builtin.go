// Package builtin is what ships inside the binary: the first-party search steps compiled into one
// wasm module (each step's C from plugins/<name>, beside its Go reference, with the C SDK from abi/c;
// go generate ./builtin builds it), the default configuration and the NVIDIA descriptor pack.
package builtin

import (
	_ "embed"
	"strings"
)

//go:generate go run ./gen

//go:embed steps.wasm
var stepsWasm []byte

//go:embed steps.wasm.sum
var stepsSum string

//go:embed pathfinder.toml
var defaultConfig []byte

//go:embed packs/nvidia.toml
var nvidiaPack []byte

// StepsModule returns the builtin steps module (a copy is not made: callers must not modify it).
func StepsModule() []byte { return stepsWasm }

// StepsModuleHash is the sha256 of StepsModule, hex, as go generate recorded it: known without
// hashing the module, so a process that answers from the result cache never touches it.
func StepsModuleHash() string {
	lines := strings.Split(strings.TrimSpace(stepsSum), "\n")
	hash, _, _ := strings.Cut(lines[len(lines)-1], " ")
	return hash
}

// DefaultConfig returns the built-in default configuration (pathfinder.toml at the repository root).
func DefaultConfig() []byte { return defaultConfig }

// NVIDIAPack returns the NVIDIA descriptor pack.
func NVIDIAPack() []byte { return nvidiaPack }

// IsStep reports whether name is a builtin step.
func IsStep(name string) bool {
	for _, s := range steps {
		if s == name {
			return true
		}
	}
	return false
}
