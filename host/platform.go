package host

import (
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
)

// Platform is an operating system, an architecture and, on Linux, a C library: "linux/amd64".
type Platform struct {
	OS   string // "linux", "windows"
	Arch string // "amd64", "arm64"
	Libc string // "glibc" on Linux, "" elsewhere
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ParsePlatform reads "os/arch" ("linux/amd64", "windows/arm64").
func ParsePlatform(s string) (Platform, error) {
	p, err := engine.ParsePlatform(s)
	return Platform(p), err
}

func (p Platform) abi() abi.Platform { return abi.Platform(p) }
