// Package inspect holds what the search engine tells the pathfinder command about itself beyond
// the Go API: its effective settings, descriptor packs and plugins, its caches. A Go program has no
// use for these; internal/engine's Engine returns them to the command.
package inspect

import (
	"github.com/pathfinder-dev/pathfinder/abi"
)

// Cache is where the on-disk caches (compiled modules, find answers) are, or why they are off.
type Cache struct {
	Dir      string // "" when off
	Off      string // why they are off
	Disabled bool   // off on purpose: PATHFINDER_NO_CACHE=1 or [cache] enabled = false
	// WriteError is why writing them failed, the first time it did in this process: a cache that
	// cannot be written costs every process a search. "" when nothing failed.
	WriteError string
}

// Where descriptor packs come from, in the order they are read. A later pack may redefine a library
// of an earlier one only with replaces = true.
const (
	PackFromBuiltin = "builtin"           // builtin:nvidia.toml, inside the binary
	PackFromSystem  = "system"            // /etc/pathfinder/packs.d
	PackFromUser    = "user"              // $XDG_CONFIG_HOME/pathfinder/packs.d
	PackFromVenv    = "$VIRTUAL_ENV"      // $VIRTUAL_ENV/share/pathfinder/packs.d, so a pip package can ship one
	PackFromConda   = "$CONDA_PREFIX"     // $CONDA_PREFIX/share/pathfinder/packs.d, so a conda package can ship one
	PackFromEnv     = "$PATHFINDER_PACKS" // files or directories, a path list
	PackFromConfig  = "config"            // [packs] dirs
)

// PackInfo is a descriptor pack that was read.
type PackInfo struct {
	File   string `json:"file"`   // the pack's absolute path, or builtin:nvidia.toml
	Origin string `json:"origin"` // a PackFrom constant; for config, "config FILE:LINE:COL" of the [packs] dirs that named it
	// Libraries are the names the pack defines, by kind, in pack order.
	Libraries map[abi.Kind][]string `json:"libraries"`
	// Replaces lists what it redefines with replaces = true: `library "cudart" of builtin:nvidia.toml`.
	Replaces []string `json:"replaces,omitempty"`
	// ReplacedBy lists what a later pack redefined: `library "cudart" by /etc/pathfinder/packs.d/a.toml`.
	ReplacedBy []string `json:"replaced_by,omitempty"`
}

// PackDir is a place packs are looked for and whether it exists.
type PackDir struct {
	Path    string `json:"path"`
	Origin  string `json:"origin"`
	Present bool   `json:"present"`
	Note    string `json:"note,omitempty"` // why it was not looked at
}

// PluginInfo is a configured plugin step: where it comes from, what it is, and what it is granted.
type PluginInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"` // "builtin:wheels", or the .wasm file's absolute path
	SHA256 string `json:"sha256"` // of the module's bytes as they are now; "" when unreadable
	Pinned bool   `json:"pinned"` // the config pins the hash (and SHA256 matched it, or Problems says not)
	// What the module says about itself through its describe export; ABI 0 when it has none (the
	// version is then checked when it first searches) or could not be loaded (see Problems).
	ABI      int      `json:"abi"`
	Version  string   `json:"version,omitempty"`
	Searches []string `json:"searches,omitempty"` // the searches the module registers
	Wants    []string `json:"wants_env,omitempty"`
	// What the config grants.
	Env           []string          `json:"env"`
	Read          []string          `json:"read"`
	Capabilities  []string          `json:"capabilities"`
	Memory        string            `json:"memory"`
	Timeout       string            `json:"timeout"`
	AllowWritable bool              `json:"allow_writable,omitempty"`
	FoundVia      string            `json:"found_via,omitempty"` // the label the config gives what it finds
	Options       map[string]string `json:"options,omitempty"`
	DefinedIn     string            `json:"defined_in"` // the file:line:col of its source key
	UsedIn        []string          `json:"used_in"`    // the step orders that name it
	// Problems are why the plugin cannot run, or what it asks for that it is not granted.
	Problems []string `json:"problems,omitempty"`
}
