package main

import "runtime/debug"

// versionString is the module version when built with `go install`, else "devel".
func versionString() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return "pathfinder " + v
}
