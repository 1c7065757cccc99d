package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/pathfinder-dev/pathfinder/host"
	"text/tabwriter"
)

func cmdList(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, "print a JSON array")
	namesOnly := fs.Bool("names", false, "print only the names, one per line (for shell completion)")
	kind := fs.String("kind", "", "list only this kind: dynamic-lib, header-dir, binary, static-lib or bitcode")
	target := targetFlag(fs)
	return func(_ context.Context, c *cli, args []string) int {
		c.target = *target
		if len(args) > 0 {
			c.errorf("list takes no arguments")
			return exitUsage
		}
		kinds := host.Kinds()
		if *kind != "" {
			k, err := host.ParseKind(*kind)
			if err != nil {
				c.printError(err)
				return exitUsage
			}
			kinds = []host.Kind{k}
		}
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		var libs []host.LibraryInfo
		for _, k := range kinds {
			libs = append(libs, f.Libraries(k)...)
		}
		switch {
		case *asJSON:
			e := json.NewEncoder(c.stdout)
			e.SetIndent("", "  ")
			e.Encode(libs)
		case *namesOnly:
			for _, l := range libs {
				fmt.Fprintln(c.stdout, l.Name)
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
