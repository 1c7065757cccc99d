package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/pathfinder-dev/pathfinder/host"
)

func cmdFind(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, "print one JSON object per name per line")
	kind := kindFlag(fs)
	target := targetFlag(fs)
	return func(ctx context.Context, c *cli, names []string) int {
		c.target = *target
		k, err := host.ParseKind(*kind)
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return exitUsage
		}
		return c.resolve(ctx, names, k, *asJSON, false)
	}
}

func cmdLoad(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, "print one JSON object per name per line")
	return func(ctx context.Context, c *cli, names []string) int {
		return c.resolve(ctx, names, host.DynamicLib, *asJSON, true)
	}
}

func kindFlag(fs *flag.FlagSet) *string {
	return fs.String("kind", string(host.DynamicLib), "what to look for: dynamic-lib, header-dir, binary, static-lib or bitcode")
}

func targetFlag(fs *flag.FlagSet) *string {
	return fs.String("target", "", "search for another `os/arch` (windows/amd64, windows/arm64, linux/arm64) without loading")
}

// failure is the JSON line of a name that was not found.
type failure struct {
	Name     string         `json:"name"`
	Kind     string         `json:"kind"`
	Error    string         `json:"error"` // "unknown", "not-available" or "not-found"
	Message  string         `json:"message"`
	Attempts []host.Attempt `json:"attempts"`
}

// resolve finds or loads each name and prints a path (or a JSON line) per name.
func (c *cli) resolve(ctx context.Context, names []string, kind host.Kind, asJSON, load bool) int {
	if len(names) == 0 {
		c.errorf("no library named; try 'pathfinder list'")
		return exitUsage
	}
	f, err := c.open()
	if err != nil {
		return c.configError(err)
	}
	code := exitOK
	enc := json.NewEncoder(c.stdout)
	for _, name := range names {
		var out any
		var path string
		if load {
			lib, e := f.Load(ctx, name)
			if err = e; err == nil {
				out, path = lib, lib.Path
			}
		} else {
			lib, e := f.FindKind(ctx, kind, name)
			if err = e; err == nil {
				out, path = lib, lib.Path
			}
		}
		if err != nil {
			code = exitNotFound
			se, ok := isSearchError(err)
			if !ok {
				c.errorf("%s: %v", name, err)
				continue
			}
			if asJSON {
				enc.Encode(failure{Name: name, Kind: string(se.Kind), Error: se.Code(), Message: se.Error(), Attempts: attemptsOrEmpty(se.Attempts)})
			} else {
				fmt.Fprintln(c.stderr, se.Error())
			}
			continue
		}
		if asJSON {
			enc.Encode(out)
		} else {
			fmt.Fprintln(c.stdout, path)
		}
	}
	return code
}

func attemptsOrEmpty(a []host.Attempt) []host.Attempt {
	if a == nil {
		return []host.Attempt{}
	}
	return a
}
