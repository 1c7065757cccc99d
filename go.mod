module github.com/pathfinder-dev/pathfinder

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/ebitengine/purego v0.11.3
	github.com/tetratelabs/wazero v1.12.0
	golang.org/x/sys v0.50.0
)
