// Package builtin is what ships inside the binary: the first-party search steps compiled into one
// wasm module (C against wasi-libc, from builtin/steps; the Go packages under plugins/ are their
// reference), and the NVIDIA descriptor pack.
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

// Steps are the step names the builtin module registers; each Go reference also builds alone as a
// plugin from plugins/<name>/wasm.
var steps = [...]string{"canary", "conda", "envroots", "programfiles", "wheels"}

// IsStep reports whether name is a builtin step.
func IsStep(name string) bool {
	for _, s := range steps {
		if s == name {
			return true
		}
	}
	return false
}
