// Command cgen writes the C SDK's copy of the plugin contract, abi/c/contract.h and abi/c/contract.c,
// from package abi: the version, export and import names and other constants; the request and
// response types, with a JSON decoder for the request and encoders for the response and the
// description (field names and omitempty from the json tags, read by reflection); and the texts of
// abi/texts.go (read with go/ast), as C string macros or, when they take arguments, functions.
// Run it as `go generate ./abi`; its test fails when the committed files no longer match the Go.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	// go generate runs it in abi/.
	h, c, err := generate(".")
	if err == nil {
		err = os.WriteFile(filepath.Join("c", "contract.h"), h, 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join("c", "contract.c"), c, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cgen:", err)
		os.Exit(1)
	}
}
