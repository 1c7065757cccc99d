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
	together := fs.Bool("all-from-one-toolkit", false, "find every named dynamic library in one root (site-packages dir, conda env, toolkit), or say which one breaks that")
	return func(ctx context.Context, c *cli, names []string) int {
		c.target = *target
		k, err := host.ParseKind(*kind)
		if err != nil {
			c.printError(err)
			return exitUsage
		}
		if *together {
			if k != host.DynamicLib {
				c.errorf("--all-from-one-toolkit is for dynamic libraries")
				return exitUsage
			}
			return c.findTogether(ctx, names, *asJSON)
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
	Error    string         `json:"error"` // host.SearchError.Code: "not-found", "refused", "load-failed", "unknown", ...
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
				if lib.LoadProblem != "" && !asJSON { // --json carries it as load_problem
					fmt.Fprintf(c.stderr, "pathfinder: warning: %s: a load of %s would fail: %s\n", name, lib.Path, lib.LoadProblem)
				}
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
				c.printError(se)
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

// findTogether prints the set found in one root, or why there is none.
func (c *cli) findTogether(ctx context.Context, names []string, asJSON bool) int {
	if len(names) == 0 {
		c.errorf("no library named; try 'pathfinder list'")
		return exitUsage
	}
	f, err := c.open()
	if err != nil {
		return c.configError(err)
	}
	libs, err := f.FindTogether(ctx, names)
	if err != nil {
		if asJSON {
			code, attempts := "mixed-toolkits", []host.Attempt{}
			if se, ok := isSearchError(err); ok {
				code, attempts = se.Code(), attemptsOrEmpty(se.Attempts)
			}
			json.NewEncoder(c.stdout).Encode(struct {
				Names    []string       `json:"names"`
				Error    string         `json:"error"`
				Message  string         `json:"message"`
				Attempts []host.Attempt `json:"attempts"`
			}{names, code, err.Error(), attempts})
		} else {
			c.printError(err)
		}
		return exitNotFound
	}
	enc := json.NewEncoder(c.stdout)
	for _, l := range libs {
		if asJSON {
			enc.Encode(l)
		} else {
			fmt.Fprintln(c.stdout, l.Path)
		}
	}
	return exitOK
}
