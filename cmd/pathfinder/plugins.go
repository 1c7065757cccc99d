package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/inspect"
)

func cmdPlugins(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, "print a JSON array")
	return func(ctx context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			c.errorf("plugins takes no arguments")
			return exitUsage
		}
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		plugins := inspect.Of(f).Plugins(ctx)
		if *asJSON {
			e := json.NewEncoder(c.stdout)
			e.SetIndent("", "  ")
			e.Encode(plugins)
		} else {
			writePlugins(c.stdout, plugins)
		}
		for _, p := range plugins {
			if len(p.Problems) > 0 {
				return exitUsage
			}
		}
		return exitOK
	}
}

// writePlugins prints one block per plugin: where it comes from, what it says it is, what it is granted.
func writePlugins(w io.Writer, plugins []inspect.PluginInfo) {
	none := func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return strings.Join(s, ", ")
	}
	for i, p := range plugins {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", p.Name)
		row := func(k, v string) { fmt.Fprintf(w, "  %-13s %s\n", k, v) }
		row("source", p.Source)
		pin := "not pinned"
		if p.Pinned {
			pin = "pinned"
		}
		if p.SHA256 != "" {
			row("sha256", p.SHA256+" ("+pin+")")
		}
		if p.ABI == 0 && len(p.Problems) == 0 {
			row("abi", "not described (no describe export): checked when it first searches")
		}
		if p.ABI != 0 {
			about := fmt.Sprintf("%d", p.ABI)
			if p.Version != "" {
				about += ", plugin version " + p.Version
			}
			if len(p.Searches) > 0 {
				about += ", searches: " + strings.Join(p.Searches, ", ")
			}
			row("abi", about)
		}
		if len(p.Wants) > 0 {
			row("wants env", strings.Join(p.Wants, ", "))
		}
		row("env", none(p.Env))
		row("read", none(p.Read))
		row("capabilities", none(p.Capabilities))
		row("memory", p.Memory)
		row("timeout", p.Timeout)
		if p.AllowWritable {
			row("writable", "allowed (allow_writable = true)")
		}
		if len(p.Options) > 0 {
			keys := make([]string, 0, len(p.Options))
			for k := range p.Options {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var kv []string
			for _, k := range keys {
				kv = append(kv, k+"="+p.Options[k])
			}
			row("options", strings.Join(kv, ", "))
		}
		row("used in", none(p.UsedIn))
		row("defined in", p.DefinedIn)
		for _, pr := range p.Problems {
			row("problem", pr)
		}
	}
}
