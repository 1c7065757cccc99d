package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
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
		if code, ok := c.checkNames(names); !ok {
			return code
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

func writeExplanation(w io.Writer, f *engine.Engine, ex *search.Explanation) {
	fmt.Fprintf(w, "%s (%s) on %s, steps: %s\n", ex.Name, ex.Kind, f.Platform(), strings.Join(f.Order(ex.Name), " → "))
	if ex.Err == nil || len(ex.Steps) > 0 {
		fmt.Fprintf(w, "    looking for %s\n", strings.Join(f.FileNames(engine.Kind(ex.Kind), ex.Name), " or "))
	}
	var searchNotes []string // the check's notes, said once here rather than with each candidate
	if c := ex.Compatibility; c != nil {
		searchNotes = c.Notes
		fmt.Fprintf(w, "    compatibility: %s\n", compatibilityLine(c))
		for _, n := range c.Notes {
			fmt.Fprintf(w, "      %s\n", n)
		}
	}
	for i, st := range ex.Steps {
		fmt.Fprintf(w, "%2d. %-15s %-8s %8s", i+1, st.Step, st.Outcome, round(st.Duration))
		if st.Detail != "" {
			fmt.Fprintf(w, "  %s", st.Detail)
		}
		fmt.Fprintln(w)
		for _, c := range st.Candidates {
			switch {
			case c.Taken:
				fmt.Fprintf(w, "      ✓ %s  (found via %s)\n", c.Path, c.FoundVia)
			case c.KeptBack:
				fmt.Fprintf(w, "      … %s  %s\n", c.Path, c.Refused)
			case c.Incompatible:
				fmt.Fprintf(w, "      ✗ %s  passed over: %s\n", c.Path, c.Refused)
			default:
				fmt.Fprintf(w, "      ✗ %s  refused: %s\n", c.Path, c.Refused)
			}
			for _, l := range c.Links {
				fmt.Fprintf(w, "        %s → %s\n", l.Path, l.Target)
			}
			if v := versionLine(c.CUDAInfo, c.VersionDetail); v != "" {
				fmt.Fprintf(w, "        %s\n", v)
			}
			for _, n := range c.Notes {
				if !slices.Contains(searchNotes, n) {
					fmt.Fprintf(w, "        %s\n", n)
				}
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

// compatibilityLine says what a search's compatibility check knew: "strict; driver 550.54.14 runs
// CUDA 12.4 at most; anchored at CUDA 12.4 (cudart, …)".
func compatibilityLine(c *search.CompatibilityTrace) string {
	parts := []string{string(c.Mode)}
	if c.Driver != "" {
		parts = append(parts, fmt.Sprintf("driver %s runs CUDA %s at most", c.Driver, c.MaxCUDA))
	}
	if c.Anchor != "" {
		parts = append(parts, "answers must be of "+c.Anchor)
	}
	return strings.Join(parts, "; ")
}

// versionLine says which CUDA a candidate belongs to and what said so: "CUDA 12.4, version
// 12.4.127, from the wheel: …"; or, undated, which sources were asked.
func versionLine(v search.CUDAInfo, detail string) string {
	if v.CUDA == "" {
		return detail
	}
	line := "CUDA " + v.CUDA
	if v.Version != "" {
		line += ", version " + v.Version
	}
	line += ", from the " + v.VersionFrom
	if detail != "" {
		line += ": " + detail
	}
	if v.Compat != "" {
		line += " (runs: " + v.Compat + ")"
	}
	return line
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
