// Command native runs the native floor search (package nativefind) in a fresh process.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pathfinder-dev/pathfinder/bench/nativefind"
)

func main() {
	p, ok := nativefind.Find(filepath.SplitList(os.Getenv("PATHFINDER_SITE_PACKAGES")))
	if !ok {
		fmt.Fprintln(os.Stderr, "not found")
		os.Exit(1)
	}
	fmt.Println(p)
}
