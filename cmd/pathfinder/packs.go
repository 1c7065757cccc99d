package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pathfinder-dev/pathfinder/internal/engine"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
)

func cmdPacks(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, jsonDocumentHelp+": the packs read and the places looked in")
	return func(_ context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			return c.usageError("takes no arguments")
		}
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		packs, dirs := f.Packs(), f.PackDirs()
		if *asJSON {
			writeJSONDocument(c.stdout, struct {
				Packs    []inspect.PackInfo `json:"packs"`
				LookedIn []inspect.PackDir  `json:"looked_in"`
			}{packs, dirs})
			return exitOK
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PACK\tFROM\tLIBRARIES\tHEADERS\tBINARIES\tSTATIC\tBITCODE")
		for _, p := range packs {
			fmt.Fprintf(tw, "%s\t%s", p.File, p.Origin)
			for _, k := range engine.Kinds() {
				fmt.Fprintf(tw, "\t%d", len(p.Libraries[k]))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		for _, p := range packs {
			if p.Origin == inspect.PackFromBuiltin && len(p.ReplacedBy) == 0 {
				continue // `pathfinder list` shows what it defines
			}
			fmt.Fprintf(c.stdout, "\n%s\n", p.File)
			for _, k := range engine.Kinds() {
				if names := p.Libraries[k]; len(names) > 0 && p.Origin != inspect.PackFromBuiltin {
					fmt.Fprintf(c.stdout, "  %-12s %s\n", k, strings.Join(names, ", "))
				}
			}
			for _, r := range p.Replaces {
				fmt.Fprintf(c.stdout, "  replaces     %s\n", r)
			}
			for _, r := range p.ReplacedBy {
				fmt.Fprintf(c.stdout, "  replaced     %s\n", r)
			}
		}
		fmt.Fprintln(c.stdout, "\nlooked in:")
		tw = tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		for _, d := range dirs {
			state := "present"
			switch {
			case d.Note != "":
				state = "skipped: " + d.Note
			case !d.Present:
				state = "absent"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", printable.String(d.Path), d.Origin, printable.String(state)) // a path may be a variable's
		}
		tw.Flush()
		return exitOK
	}
}
