package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
)

func cmdVersion(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	return func(_ context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			return c.usageError("takes no arguments")
		}
		fmt.Fprintln(c.stdout, versionString())
		return exitOK
	}
}

// versionString is the module version when built with `go install`, else "devel".
func versionString() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return "pathfinder " + v
}
