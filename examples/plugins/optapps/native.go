//go:build !wasip1

package main

import (
	"fmt"
	"os"
)

// main explains itself when the plugin is built for the host by mistake (go build ./... builds it).
func main() {
	fmt.Fprintln(os.Stderr, "optapps is a pathfinder plugin, not a program: build it with\n"+
		"  GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o optapps.wasm .")
	os.Exit(2)
}
