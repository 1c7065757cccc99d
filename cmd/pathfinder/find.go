package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
)

func cmdFind(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, jsonLinesHelp+", one per name")
	kind := kindFlag(fs)
	target := fs.String("target", "", "search as a process on `OS/ARCH` would ("+strings.Join(targets, ", ")+"), without loading anything")
	together := fs.Bool("all-from-one-toolkit", false, "find every named dynamic library in one root (site-packages dir, conda env, toolkit), or say which one breaks that")
	return func(ctx context.Context, c *cli, names []string) int {
		c.target = *target
		k, ok := c.parseKind(*kind)
		if !ok || !c.checkTarget(*target) {
			return exitUsage
		}
		if *together {
			if k != engine.DynamicLib {
				return c.usageError("--all-from-one-toolkit is for dynamic libraries")
			}
			return c.findTogether(ctx, names, *asJSON)
		}
		return c.resolve(ctx, names, k, *asJSON, false)
	}
}

func cmdLoad(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, jsonLinesHelp+", one per name")
	return func(ctx context.Context, c *cli, names []string) int {
		return c.resolve(ctx, names, engine.DynamicLib, *asJSON, true)
	}
}

func kindFlag(fs *flag.FlagSet) *string {
	return fs.String("kind", string(engine.DynamicLib), "look for this `KIND` of thing: dynamic-lib (the default), header-dir, binary, static-lib or bitcode")
}

// The two --json conventions: a command that answers per name prints a line per name, so a tool
// reads each as it comes; one that answers as a whole prints one document.
const (
	jsonLinesHelp    = "print one JSON object per line"
	jsonDocumentHelp = "print one JSON document"
)

// writeJSONDocument writes v as the one document of a jsonDocumentHelp command: indented by two
// spaces, ending in a newline.
func writeJSONDocument(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// failure is the JSON line of a name that was not found.
type failure struct {
	Name     string           `json:"name"`
	Kind     string           `json:"kind"`
	Error    string           `json:"error"` // engine.SearchError.Code: "not-found", "refused", "load-failed", "unknown", ...
	Message  string           `json:"message"`
	Attempts []search.Attempt `json:"attempts"`
}

// resolve finds or loads each name and prints a path (or a JSON line) per name.
func (c *cli) resolve(ctx context.Context, names []string, kind engine.Kind, asJSON, load bool) int {
	if code, ok := c.checkNames(names); !ok {
		return code
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
				c.errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "pathfinder: "))
				continue
			}
			if asJSON {
				enc.Encode(failure{Name: name, Kind: string(se.Kind), Error: se.Code(), Message: se.Error(), Attempts: attemptsOrEmpty(se.Attempts)})
			} else {
				c.errorf("%s%s", se, c.explainHint(se))
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

// checkNames refuses a command line that names no library, or an empty name, as a usage error.
func (c *cli) checkNames(names []string) (int, bool) {
	switch {
	case len(names) == 0:
		return c.usageError("no library named; 'pathfinder list' lists them"), false
	case slices.Contains(names, ""):
		return c.usageError("an empty name; 'pathfinder list' lists the names"), false
	}
	return exitOK, true
}

// togetherFailed prints a JSON line per name for a set with no one root, as find does per name: the
// name that was not found at all has its own error; every other name, and every name when each was
// found but in different roots, has "mixed-toolkits" and the set's message.
func (c *cli) togetherFailed(names []string, err error) {
	se, _ := isSearchError(err)
	set := err.Error()
	if se != nil {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = fmt.Sprintf("%q", n)
		}
		set = fmt.Sprintf("no one root holds all of %s: %v", strings.Join(q, ", "), err)
	}
	enc := json.NewEncoder(c.stdout)
	for _, name := range names {
		if se != nil && se.Name == name {
			enc.Encode(failure{Name: name, Kind: string(se.Kind), Error: se.Code(), Message: se.Error(), Attempts: attemptsOrEmpty(se.Attempts)})
			continue
		}
		enc.Encode(failure{Name: name, Kind: string(engine.DynamicLib), Error: "mixed-toolkits", Message: set, Attempts: []search.Attempt{}})
	}
}

// explainHint points a find or load line at the command that shows the same search step by step;
// the host's errors do not name the CLI, as a Go program gets them too.
func (c *cli) explainHint(se *engine.SearchError) string {
	cmd := "pathfinder explain " + se.Name
	if se.Kind != "" && se.Kind != engine.DynamicLib {
		cmd += " --kind " + string(se.Kind)
	}
	if c.target != "" {
		cmd += " --target " + c.target
	}
	switch se.Code() {
	case "unknown":
		if k, ok := c.otherKind(se); ok {
			return fmt.Sprintf(": pathfinder find %s --kind %s", se.Name, k)
		}
	case "not-found":
		if len(se.Failed) > 0 {
			return "; " + cmd
		}
		return " (" + cmd + " lists them)"
	case "refused":
		return fmt.Sprintf(" (%s lists all %d places looked)", cmd, len(se.Attempts))
	case "load-failed":
		return " (" + cmd + " lists the steps)"
	case "incompatible":
		return " (" + cmd + " shows each candidate's CUDA; pathfinder driver what the driver runs)"
	}
	return ""
}

// otherKind is the one other kind that has the name se did not know ("cccl" is a header set).
func (c *cli) otherKind(se *engine.SearchError) (engine.Kind, bool) {
	var kinds []engine.Kind
	for _, k := range engine.Kinds() {
		if k != se.Kind && slices.ContainsFunc(c.finder.Libraries(k), func(l search.LibraryInfo) bool { return l.Name == se.Name }) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		return "", false
	}
	return kinds[0], true
}

func attemptsOrEmpty(a []search.Attempt) []search.Attempt {
	if a == nil {
		return []search.Attempt{}
	}
	return a
}

// findTogether prints the set found in one root, or why there is none.
func (c *cli) findTogether(ctx context.Context, names []string, asJSON bool) int {
	if code, ok := c.checkNames(names); !ok {
		return code
	}
	f, err := c.open()
	if err != nil {
		return c.configError(err)
	}
	libs, err := f.FindTogether(ctx, names)
	if err != nil {
		if asJSON {
			c.togetherFailed(names, err)
		} else {
			c.fail(err)
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
