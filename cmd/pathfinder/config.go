package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/engine"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
)

func cmdConfig(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, jsonLinesHelp+", one per key: key, value, origin; with check, one for the file: file, ok, problems")
	return func(ctx context.Context, c *cli, args []string) int {
		if len(args) > 0 && args[0] == "check" {
			if len(args) != 2 {
				return c.usageError("check takes one file")
			}
			if c.configFile != "" {
				return c.usageError("check reads the one file it is given, not --config")
			}
			err := engine.Options{LookupEnv: c.lookupEnv}.CheckConfigFile(ctx, args[1])
			if *asJSON {
				checked := struct {
					File     string   `json:"file"`
					OK       bool     `json:"ok"`
					Problems []string `json:"problems"`
				}{args[1], err == nil, []string{}}
				if err != nil {
					checked.Problems = strings.Split(err.Error(), "\n")
				}
				json.NewEncoder(c.stdout).Encode(checked)
			}
			switch {
			case err != nil && !*asJSON:
				c.fail(err)
			case err == nil && !*asJSON:
				fmt.Fprintf(c.stdout, "%s: ok\n", args[1])
			}
			if err != nil {
				return exitUsage
			}
			return exitOK
		}
		if len(args) > 0 {
			if near := didYouMean(args[0], []string{"check"}, "%q"); near != "" {
				return c.usageError("unknown subcommand %q%s", args[0], near)
			}
			return c.usageError("takes no arguments, or check FILE")
		}
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		settings := f.Settings()
		if *asJSON {
			e := json.NewEncoder(c.stdout)
			for _, s := range settings {
				e.Encode(s)
			}
			return exitOK
		}
		fmt.Fprintf(c.stdout, "# pathfinder's effective configuration: every key, and after it the file:line:column that set it.\n")
		fmt.Fprintf(c.stdout, "# Layers read, later ones overriding earlier ones key by key:\n")
		for _, l := range f.ConfigFiles() {
			fmt.Fprintf(c.stdout, "#   %s\n", l)
		}
		if v := c.getenv("PATHFINDER_CACHE_DIR"); v != "" {
			fmt.Fprintf(c.stdout, "# $PATHFINDER_CACHE_DIR=%s overrides cache.dir\n", printable.String(v))
		}
		if c.getenv("PATHFINDER_NO_CACHE") == "1" {
			fmt.Fprintf(c.stdout, "# $PATHFINDER_NO_CACHE=1 overrides cache.enabled\n")
		}
		fmt.Fprintln(c.stdout)
		fmt.Fprint(c.stdout, strings.TrimRight(inspect.FormatSettings(settings), "\n")+"\n")
		return exitOK
	}
}
