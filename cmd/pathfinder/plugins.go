package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/engine"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
)

func cmdPlugins(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, jsonLinesHelp+", one per step: the host's own first, then the plugins")
	return func(ctx context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			return c.usageError("takes no arguments")
		}
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		steps, plugins := hostSteps(f.Settings()), f.Plugins(ctx)
		if *asJSON {
			e := json.NewEncoder(c.stdout)
			for _, s := range steps {
				e.Encode(s)
			}
			for _, p := range plugins {
				e.Encode(p)
			}
		} else {
			writeHostSteps(c.stdout, steps)
			if len(plugins) > 0 {
				fmt.Fprintln(c.stdout)
			}
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

// hostStep is a step the host runs itself, outside any sandbox: it has no module, no grants and no
// limits, so it is listed with what it looks at instead.
type hostStep struct {
	Name    string   `json:"name"`
	Source  string   `json:"source"` // always "host"
	LooksAt string   `json:"looks_at"`
	UsedIn  []string `json:"used_in"` // the step orders that name it, as for a plugin
}

// hostSteps describes already-loaded and system, with the orders of settings that name each.
func hostSteps(settings []inspect.Setting) []hostStep {
	steps := []hostStep{
		{Name: engine.StepAlreadyLoaded, LooksAt: "the libraries this process has loaded already, by file name (dynamic libraries only)"},
		{Name: engine.StepSystem, LooksAt: "the OS loader's own search (on Linux: LD_LIBRARY_PATH, /etc/ld.so.cache, the default directories); " +
			"find asks a model of it and loads nothing, load asks the loader (dynamic libraries only)"},
	}
	for i := range steps {
		steps[i].Source, steps[i].UsedIn = "host", []string{}
		for _, s := range settings {
			order, ok := s.Value.([]string)
			if ok && (s.Key == "search.order" || strings.HasPrefix(s.Key, "library.") && strings.HasSuffix(s.Key, ".order")) && slices.Contains(order, steps[i].Name) {
				steps[i].UsedIn = append(steps[i].UsedIn, s.Key)
			}
		}
	}
	return steps
}

func writeHostSteps(w io.Writer, steps []hostStep) {
	for i, s := range steps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", s.Name)
		row := func(k, v string) { fmt.Fprintf(w, "  %-13s %s\n", k, v) }
		row("source", s.Source)
		row("looks at", s.LooksAt)
		row("used in", strings.Join(s.UsedIn, ", "))
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
		if p.FoundVia != "" {
			row("found_via", p.FoundVia)
		}
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
