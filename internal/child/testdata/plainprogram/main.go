// Command plainprogram imports pathfinder's packages and does nothing special for their child
// processes: no call before its own work. Its main appends a line to $PLAIN_COUNT each time it runs,
// then uses both features that start a child of this binary: the driver probe's libcuda method and a
// find with [system] resolve = "dlopen" (the config in $PLAIN_CONFIG). child's tests build and run it.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/pathfinder-dev/pathfinder/host"
	"github.com/pathfinder-dev/pathfinder/host/driver"
)

func main() {
	f, err := os.OpenFile(os.Getenv("PLAIN_COUNT"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Println("count:", err)
		os.Exit(3)
	}
	fmt.Fprintln(f, "main ran")
	f.Close()

	ctx := context.Background()
	r := driver.Probe(ctx, driver.Options{Methods: []string{"libcuda"}})
	for _, m := range r.Methods {
		if m.Name == "libcuda" {
			fmt.Printf("libcuda: %s: %s\n", m.Outcome, m.Detail)
		}
	}
	finder, err := host.New(host.Options{ConfigFile: os.Getenv("PLAIN_CONFIG")})
	if err != nil {
		fmt.Println("config:", err)
		os.Exit(3)
	}
	defer finder.Close()
	lib, err := finder.Find(ctx, "nvvm")
	if err != nil {
		fmt.Println("nvvm:", err)
		os.Exit(1)
	}
	fmt.Printf("nvvm: %s (%s)\n", lib.Path, lib.FoundVia)
}
