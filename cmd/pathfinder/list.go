package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
)

func cmdList(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, "print a JSON array")
	namesOnly := fs.Bool("names", false, "print only the names, one per line (for shell completion)")
	return func(_ context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			c.errorf("list takes no arguments")
			return exitUsage
		}
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		libs := f.Libraries()
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
			fmt.Fprintf(tw, "NAME\tCATEGORY\tON %s\n", f.Platform())
			for _, l := range libs {
				avail := "yes"
				if !l.Available {
					avail = "no"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Name, l.Category, avail)
			}
			tw.Flush()
		}
		return exitOK
	}
}
