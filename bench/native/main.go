// Command native runs the native floor search (package nativefind) in a fresh process for the
// libraries named on the command line, printing each path.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/bench/nativefind"
)

func main() {
	libs, err := nativefind.Libraries()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sites := filepath.SplitList(os.Getenv("PATHFINDER_SITE_PACKAGES"))
	code := 0
	for _, name := range os.Args[1:] {
		i := slices.IndexFunc(libs, func(l abi.Descriptor) bool { return l.Name == name })
		p, ok := "", false
		if i >= 0 {
			p, ok = nativefind.Find(libs[i], sites)
		}
		if !ok {
			fmt.Fprintln(os.Stderr, name, "not found")
			code = 1
			continue
		}
		fmt.Println(p)
	}
	os.Exit(code)
}
