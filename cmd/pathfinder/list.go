package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
)

func cmdList(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, jsonLinesHelp+", one per name and kind: name, kind, category, available")
	namesOnly := fs.Bool("names", false, "print only the names, each once, one per line (for shell completion)")
	kind := fs.String("kind", "", "list only this `KIND`: dynamic-lib, header-dir, binary, static-lib or bitcode (default all)")
	target := fs.String("target", "", "say whether `OS/ARCH` ("+strings.Join(targets, ", ")+") has each name, instead of this platform")
	return func(_ context.Context, c *cli, args []string) int {
		c.target = *target
		if len(args) > 0 {
			return c.usageError("takes no arguments")
		}
		if !c.checkTarget(*target) {
			return exitUsage
		}
		kinds := engine.Kinds()
		if *kind != "" {
			k, ok := c.parseKind(*kind)
			if !ok {
				return exitUsage
			}
			kinds = []engine.Kind{k}
		}
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		var libs []search.LibraryInfo
		for _, k := range kinds {
			libs = append(libs, f.Libraries(k)...)
		}
		switch {
		case *asJSON:
			e := json.NewEncoder(c.stdout)
			for _, l := range libs {
				e.Encode(l)
			}
		case *namesOnly:
			seen := map[string]bool{} // cudart is a library and a header set: one name
			for _, l := range libs {
				if !seen[l.Name] {
					seen[l.Name] = true
					fmt.Fprintln(c.stdout, l.Name)
				}
			}
		default:
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "NAME\tKIND\tCATEGORY\tON %s\n", f.Platform())
			for _, l := range libs {
				avail := "yes"
				if !l.Available {
					avail = "no"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Name, l.Kind, l.Category, avail)
			}
			tw.Flush()
		}
		return exitOK
	}
}
