package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/internal/doctor"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
	"github.com/pathfinder-dev/pathfinder/internal/english"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
)

// doctor exits exitOK when it lists no problem, exitNotFound when it lists one or more (a driver
// that does not work is one, as it is driver's exitNotFound), and exitUsage on bad flags or config.
func cmdDoctor(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	root := fs.String("root", "", "probe the driver under `DIR` (a captured machine) instead of this one (see 'pathfinder driver --help')")
	all := fs.Bool("all", false, "also list every library with where it was found or why not, and the settings read")
	pid := fs.Int("pid", 0, "also check the running process `PID` for NVIDIA libraries it has loaded twice")
	asJSON := fs.Bool("json", false, jsonDocumentHelp+": the summary, the driver (as driver --json), each problem with its fix; with --all every library")
	return func(ctx context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			return c.usageError("takes no arguments")
		}
		opts, err := c.probeOptions(*root, "")
		if err != nil {
			return c.usageError("%v", err)
		}
		if *pid < 0 {
			return c.usageError("--pid %d: not a process id", *pid)
		}
		// The driver first: the search holds what it finds to the same driver the report shows.
		c.driver = driver.Probe(ctx, opts)
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		d, err := doctor.Gather(ctx, f, c.driver, *pid, c.getenv)
		if err != nil {
			return c.usageError("--pid: %v", err)
		}
		problems := doctor.Diagnose(d)
		if *asJSON {
			writeDoctorJSON(c.stdout, d, problems, *all)
		} else {
			writeDoctor(c.stdout, d, problems, *all)
		}
		if len(problems) > 0 {
			return exitNotFound
		}
		return exitOK
	}
}

func writeDoctor(w io.Writer, d *doctor.Facts, problems []doctor.Problem, all bool) {
	fmt.Fprintf(w, "%s on %s\n", versionString(), d.Platform)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "libraries\t%s\n", librarySummary(d))
	r := d.Driver
	line := string(r.State) + ": " + r.Summary
	switch {
	case r.MaxCUDA != "" && r.MaxCUDASource == driver.MaxCUDAFromUserSpace:
		line += "; its user-space driver supports CUDA up to " + r.MaxCUDA
	case r.MaxCUDA != "":
		line += "; supports CUDA up to " + r.MaxCUDA
	}
	fmt.Fprintf(tw, "driver\t%s\n", line)
	if g := gpuSummary(r.GPUs); g != "" {
		fmt.Fprintf(tw, "gpus\t%s\n", g)
	}
	if c := d.Compat; c != nil {
		fmt.Fprintf(tw, "compatibility\t%s\n", compatibilityLine(c))
		for _, n := range c.Notes {
			fmt.Fprintf(tw, "\t%s\n", n)
		}
	}
	for _, a := range d.Libraries {
		if a.Found != nil && len(a.Found.PassedOver) > 0 {
			fmt.Fprintf(tw, "\t%s\n", choiceLine(a))
		}
	}
	tw.Flush()

	fmt.Fprintln(w)
	if len(problems) == 0 {
		fmt.Fprintln(w, "no problems found")
	} else {
		fmt.Fprintln(w, english.Plural(len(problems), "problem"))
	}
	for _, p := range problems { // escaped: a problem may quote a variable's value
		fmt.Fprintf(w, "  ✗ %s\n", printable.String(p.Title))
		if p.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", printable.String(p.Fix))
		}
	}
	if all {
		writeSettings(w, d)
		writeLibraries(w, d)
	}
	fmt.Fprintln(w)
	if !all {
		fmt.Fprintln(w, "'pathfinder doctor --all' lists every library; 'pathfinder explain NAME' shows how one was searched for;")
	} else {
		fmt.Fprintln(w, "'pathfinder explain NAME' shows how one library was searched for;")
	}
	fmt.Fprintln(w, "'pathfinder driver' shows how the driver was probed.")
}

// choiceLine says which copy of a library the compatibility check chose and what it passed over.
func choiceLine(a doctor.Answer) string {
	passed := make([]string, len(a.Found.PassedOver))
	for i, p := range a.Found.PassedOver {
		passed[i] = fmt.Sprintf("%s (%s)", p.Path, p.Reason)
	}
	took := a.Found.Path
	if a.Found.CUDA != "" {
		took += " (CUDA " + a.Found.CUDA + ")"
	}
	return fmt.Sprintf("%s: took %s, passed over %s", a.Name, took, strings.Join(passed, ", "))
}

// librarySummary is "3 of 50 found: 2 from site-packages, 1 from conda".
func librarySummary(d *doctor.Facts) string {
	found, avail := 0, 0
	var vias []string
	count := map[string]int{}
	for _, a := range d.Libraries {
		if !a.Available {
			continue
		}
		avail++
		if a.Found == nil {
			continue
		}
		found++
		if count[a.Found.FoundVia] == 0 {
			vias = append(vias, a.Found.FoundVia)
		}
		count[a.Found.FoundVia]++
	}
	s := fmt.Sprintf("%d of %d found", found, avail)
	var parts []string
	for _, v := range vias {
		parts = append(parts, fmt.Sprintf("%d from %s", count[v], v))
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

// gpuSummary is "2 × NVIDIA H100 80GB HBM3 (compute capability 9.0)", one group per model.
func gpuSummary(gpus []driver.GPU) string {
	var keys []string
	count := map[string]int{}
	for _, g := range gpus {
		k := g.Name
		if k == "" {
			k = "unnamed GPU"
		}
		switch {
		case strings.Contains(g.ComputeCapabilitySource, "inferred"):
			k += " (compute capability " + g.ComputeCapability + ", inferred from the PCI id)"
		case g.ComputeCapability != "":
			k += " (compute capability " + g.ComputeCapability + ")"
		}
		if count[k] == 0 {
			keys = append(keys, k)
		}
		count[k]++
	}
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d × %s", count[k], k))
	}
	return strings.Join(parts, ", ")
}

func writeSettings(w io.Writer, d *doctor.Facts) {
	fmt.Fprintln(w, "\nsettings")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  config\t%s\n", strings.Join(d.ConfigFiles, ", "))
	if len(d.Sites) == 0 {
		fmt.Fprintf(tw, "  site-packages\t(none found: set VIRTUAL_ENV or PATHFINDER_SITE_PACKAGES)\n")
	}
	for i, s := range d.Sites {
		label := ""
		if i == 0 {
			label = "site-packages"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", label, printable.String(s))
	}
	var env []string
	for _, v := range []string{"CONDA_PREFIX", "CUDA_PATH", "CUDA_HOME", "CUDNN_PATH", "NCCL_HOME", "LD_LIBRARY_PATH"} {
		if val := d.Getenv(v); val != "" {
			env = append(env, v+"="+printable.String(val))
		}
	}
	if len(env) == 0 {
		env = []string{"(none of CONDA_PREFIX, CUDA_PATH, CUDA_HOME, CUDNN_PATH, NCCL_HOME, LD_LIBRARY_PATH is set)"}
	}
	fmt.Fprintf(tw, "  environment\t%s\n", strings.Join(env, "  "))
	cache := d.Cache.Dir
	switch {
	case cache == "":
		cache = "(off: " + d.Cache.Off + ")"
	case d.Cache.WriteError != "":
		cache += " (cannot be written: " + d.Cache.WriteError + ")"
	}
	fmt.Fprintf(tw, "  cache\t%s\n", printable.String(cache))
	tw.Flush()
}

func writeLibraries(w io.Writer, d *doctor.Facts) {
	width := 0
	for _, a := range d.Libraries {
		width = max(width, len(a.Name))
	}
	category := ""
	for _, a := range d.Libraries {
		if a.Category != category {
			category = a.Category
			fmt.Fprintf(w, "\n%s libraries\n", category)
		}
		switch {
		case !a.Available:
			fmt.Fprintf(w, "  %-*s  -  not available on %s\n", width, a.Name, d.Platform)
		case a.Found != nil && a.Found.CUDA != "":
			fmt.Fprintf(w, "  %-*s  ✓  %s  (%s, CUDA %s)\n", width, a.Name, a.Found.Path, a.Found.FoundVia, a.Found.CUDA)
		case a.Found != nil:
			fmt.Fprintf(w, "  %-*s  ✓  %s  (%s)\n", width, a.Name, a.Found.Path, a.Found.FoundVia)
		default:
			msg := a.Err.Error()
			var se *engine.SearchError
			if errors.As(a.Err, &se) && errors.Is(se, engine.ErrNotFound) {
				msg = fmt.Sprintf("not found (looked for %s in %d places)", strings.Join(se.Looked, " or "), len(se.Attempts))
			}
			fmt.Fprintf(w, "  %-*s  ✗  %s\n", width, a.Name, msg)
		}
	}
}
