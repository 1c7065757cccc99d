// Package builtin is what ships inside the binary: the first-party search steps compiled into one
// wasm module, and the NVIDIA descriptor pack.
package builtin

import _ "embed"

//go:generate go run ./gen

//go:embed steps.wasm
var stepsWasm []byte

//go:embed pathfinder.toml
var defaultConfig []byte

//go:embed packs/nvidia.toml
var nvidiaPack []byte

// StepsModule returns the builtin steps module (a copy is not made: callers must not modify it).
func StepsModule() []byte { return stepsWasm }

// DefaultConfig returns the built-in default configuration (pathfinder.toml at the repository root).
func DefaultConfig() []byte { return defaultConfig }

// NVIDIAPack returns the NVIDIA descriptor pack.
func NVIDIAPack() []byte { return nvidiaPack }

// Steps are the step names the builtin module registers, each also buildable alone from
// plugins/<name>/wasm.
var steps = [...]string{"canary", "conda", "envroots", "wheels"}

// IsStep reports whether name is a builtin step.
func IsStep(name string) bool {
	for _, s := range steps {
		if s == name {
			return true
		}
	}
	return false
}
