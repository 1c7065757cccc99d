package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pathfinder-dev/pathfinder/host"
)

func cmdExplain(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, jsonDocumentHelp+": the steps, their candidates and the answer")
	kind := kindFlag(fs)
	target := fs.String("target", "", "explain the search as on `OS/ARCH` ("+strings.Join(targets, ", ")+"), without loading anything")
	return func(ctx context.Context, c *cli, names []string) int {
		c.target = *target
		if len(names) != 1 {
			return c.usageError("takes one library name")
		}
		k, ok := c.parseKind(*kind)
		if !ok || !c.checkTarget(*target) {
			return exitUsage
		}
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		ex := f.Explain(ctx, k, names[0])
		if *asJSON {
			writeJSONDocument(c.stdout, ex) // with its error's code and message
		} else {
			writeExplanation(c.stdout, f, ex)
		}
		if ex.Err != nil {
			return exitNotFound
		}
		return exitOK
	}
}

func writeExplanation(w io.Writer, f *host.Finder, ex *host.Explanation) {
	fmt.Fprintf(w, "%s (%s) on %s, steps: %s\n", ex.Name, ex.Kind, f.Platform(), strings.Join(f.Inspect().Order(ex.Name), " → "))
	if ex.Err == nil || len(ex.Steps) > 0 {
		fmt.Fprintf(w, "    looking for %s\n", strings.Join(f.Inspect().FileNames(ex.Kind, ex.Name), " or "))
	}
	for i, st := range ex.Steps {
		fmt.Fprintf(w, "%2d. %-15s %-8s %8s", i+1, st.Step, st.Outcome, round(st.Duration))
		if st.Detail != "" {
			fmt.Fprintf(w, "  %s", st.Detail)
		}
		fmt.Fprintln(w)
		for _, c := range st.Candidates {
			if c.Taken {
				fmt.Fprintf(w, "      ✓ %s  (found via %s)\n", c.Path, c.FoundVia)
			} else {
				fmt.Fprintf(w, "      ✗ %s  refused: %s\n", c.Path, c.Refused)
			}
			for _, l := range c.Links {
				fmt.Fprintf(w, "        %s → %s\n", l.Path, l.Target)
			}
			if c.LoadProblem != "" {
				fmt.Fprintf(w, "        but a load would fail: %s\n", c.LoadProblem)
			}
			if c.Note != "" {
				fmt.Fprintf(w, "        %s\n", c.Note)
			}
		}
		for _, t := range st.Tried {
			if t.Path == "" {
				fmt.Fprintf(w, "      · %s\n", t.Reason)
			} else {
				fmt.Fprintf(w, "      · %s  %s\n", t.Path, t.Reason)
			}
		}
		for _, l := range st.Log {
			fmt.Fprintf(w, "      log: %s\n", l)
		}
	}
	switch {
	case ex.Result != nil:
		fmt.Fprintf(w, "→ %s (found via %s, step %s) in %s\n", ex.Result.Path, ex.Result.FoundVia, ex.Result.Step, round(ex.Duration))
	case ex.Err != nil:
		fmt.Fprintf(w, "→ %v\n", ex.Err)
	}
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
