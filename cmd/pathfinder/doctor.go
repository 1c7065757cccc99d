package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host"
	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/internal/english"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
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
		opts, err := probeOptions(*root, "")
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
		d := gatherDoctor(ctx, f, c.driver, *pid, os.Getenv)
		if d.mapsErr != nil {
			return c.usageError("--pid: %v", d.mapsErr)
		}
		problems := diagnose(d)
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

// doctorFacts is everything the diagnostics read: the Finder's answers, the driver report, the
// environment, and the mapped files of a process.
type doctorFacts struct {
	version     string
	platform    abi.Platform
	configFiles []string
	sites       []string // the site-packages directories the wheels step searches
	cache       inspect.Cache
	getenv      func(string) string
	libs        []libAnswer // every dynamic library of the catalog, in its order
	report      *driver.Report
	compat      *host.CompatibilityTrace // what the search's compatibility check knew
	pid         int
	maps        []mappedFile // the files process pid maps; nil without --pid
	mapsErr     error
	ignored     []host.IgnoredInput // inputs the Finder did not use, and why
}

// libAnswer is the Finder's answer for one library.
type libAnswer struct {
	host.LibraryInfo
	fileNames []string      // what a search looks for, newest first
	lib       *host.Library // nil when not found
	err       error
	// loadProblem is the loader's predicted failure for a found library ("" when it would load).
	loadProblem string
}

// gatherDoctor finds every library, in the catalog's order and one after another, as a program that
// asked for them all would: the first answer with a known CUDA version anchors the rest.
func gatherDoctor(ctx context.Context, f *host.Finder, report *driver.Report, pid int, getenv func(string) string) *doctorFacts {
	d := &doctorFacts{
		version: versionString(), platform: f.Platform(), configFiles: f.Inspect().ConfigFiles(), sites: f.Inspect().SitePackages(),
		getenv: getenv, pid: pid, report: report,
	}
	infos := f.Libraries(host.DynamicLib)
	d.libs = make([]libAnswer, len(infos))
	for i, l := range infos {
		a := &d.libs[i]
		*a = libAnswer{LibraryInfo: l, fileNames: f.Inspect().FileNames(host.DynamicLib, l.Name)}
		if l.Available {
			a.lib, a.err = f.Find(ctx, l.Name)
		}
		if a.lib != nil {
			a.loadProblem = a.lib.LoadProblem
		}
	}
	d.compat = f.Compatibility()
	d.cache = f.Inspect().Cache()           // after the searches: what writing their answers met
	d.ignored = f.Inspect().IgnoredInputs() // after the searches: what their steps passed over
	if pid > 0 {
		d.maps, d.mapsErr = readMaps(pid)
	}
	d.ignored = append(d.ignored, d.report.Ignored...)
	return d
}

// lib returns the answer for name, or nil.
func (d *doctorFacts) lib(name string) *libAnswer {
	for i := range d.libs {
		if d.libs[i].Name == name {
			return &d.libs[i]
		}
	}
	return nil
}

func writeDoctor(w io.Writer, d *doctorFacts, problems []problem, all bool) {
	fmt.Fprintf(w, "%s on %s\n", d.version, d.platform)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "libraries\t%s\n", librarySummary(d))
	r := d.report
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
	if c := d.compat; c != nil {
		fmt.Fprintf(tw, "compatibility\t%s\n", compatibilityLine(c))
		for _, n := range c.Notes {
			fmt.Fprintf(tw, "\t%s\n", n)
		}
	}
	for _, a := range d.libs {
		if a.lib != nil && len(a.lib.PassedOver) > 0 {
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
		fmt.Fprintf(w, "  ✗ %s\n", printable.String(p.title))
		if p.fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", printable.String(p.fix))
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
func choiceLine(a libAnswer) string {
	passed := make([]string, len(a.lib.PassedOver))
	for i, p := range a.lib.PassedOver {
		passed[i] = fmt.Sprintf("%s (%s)", p.Path, p.Reason)
	}
	took := a.lib.Path
	if a.lib.CUDA != "" {
		took += " (CUDA " + a.lib.CUDA + ")"
	}
	return fmt.Sprintf("%s: took %s, passed over %s", a.Name, took, strings.Join(passed, ", "))
}

// librarySummary is "3 of 50 found: 2 from site-packages, 1 from conda".
func librarySummary(d *doctorFacts) string {
	found, avail := 0, 0
	var vias []string
	count := map[string]int{}
	for _, a := range d.libs {
		if !a.Available {
			continue
		}
		avail++
		if a.lib == nil {
			continue
		}
		found++
		if count[a.lib.FoundVia] == 0 {
			vias = append(vias, a.lib.FoundVia)
		}
		count[a.lib.FoundVia]++
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

func writeSettings(w io.Writer, d *doctorFacts) {
	fmt.Fprintln(w, "\nsettings")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  config\t%s\n", strings.Join(d.configFiles, ", "))
	if len(d.sites) == 0 {
		fmt.Fprintf(tw, "  site-packages\t(none found: set VIRTUAL_ENV or PATHFINDER_SITE_PACKAGES)\n")
	}
	for i, s := range d.sites {
		label := ""
		if i == 0 {
			label = "site-packages"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", label, printable.String(s))
	}
	var env []string
	for _, v := range []string{"CONDA_PREFIX", "CUDA_PATH", "CUDA_HOME", "CUDNN_PATH", "NCCL_HOME", "LD_LIBRARY_PATH"} {
		if val := d.getenv(v); val != "" {
			env = append(env, v+"="+printable.String(val))
		}
	}
	if len(env) == 0 {
		env = []string{"(none of CONDA_PREFIX, CUDA_PATH, CUDA_HOME, CUDNN_PATH, NCCL_HOME, LD_LIBRARY_PATH is set)"}
	}
	fmt.Fprintf(tw, "  environment\t%s\n", strings.Join(env, "  "))
	cache := d.cache.Dir
	switch {
	case cache == "":
		cache = "(off: " + d.cache.Off + ")"
	case d.cache.WriteError != "":
		cache += " (cannot be written: " + d.cache.WriteError + ")"
	}
	fmt.Fprintf(tw, "  cache\t%s\n", printable.String(cache))
	tw.Flush()
}

func writeLibraries(w io.Writer, d *doctorFacts) {
	width := 0
	for _, a := range d.libs {
		width = max(width, len(a.Name))
	}
	category := ""
	for _, a := range d.libs {
		if a.Category != category {
			category = a.Category
			fmt.Fprintf(w, "\n%s libraries\n", category)
		}
		switch {
		case !a.Available:
			fmt.Fprintf(w, "  %-*s  -  not available on %s\n", width, a.Name, d.platform)
		case a.lib != nil && a.lib.CUDA != "":
			fmt.Fprintf(w, "  %-*s  ✓  %s  (%s, CUDA %s)\n", width, a.Name, a.lib.Path, a.lib.FoundVia, a.lib.CUDA)
		case a.lib != nil:
			fmt.Fprintf(w, "  %-*s  ✓  %s  (%s)\n", width, a.Name, a.lib.Path, a.lib.FoundVia)
		default:
			msg := a.err.Error()
			var se *host.SearchError
			if errors.As(a.err, &se) && errors.Is(se, host.ErrNotFound) {
				msg = fmt.Sprintf("not found (looked for %s in %d places)", strings.Join(se.Looked, " or "), len(se.Attempts))
			}
			fmt.Fprintf(w, "  %-*s  ✗  %s\n", width, a.Name, msg)
		}
	}
}

// mappedFile is one file a process maps, from /proc/PID/maps.
type mappedFile struct {
	path  string
	inode string // "dev inode", which tells two copies from two names of one file
}

// readMaps lists the distinct files process pid maps.
func readMaps(pid int) ([]mappedFile, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no process %d (its libraries are read from /proc/%d/maps, on Linux)", pid, pid)
	}
	if err != nil {
		return nil, fmt.Errorf("process %d: %v", pid, errors.Unwrap(err))
	}
	defer f.Close()
	var out []mappedFile
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// address perms offset dev inode path (the path may hold spaces)
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[4] == "0" {
			continue
		}
		i := strings.Index(sc.Text(), " /")
		if i < 0 {
			continue
		}
		path := strings.TrimSuffix(sc.Text()[i+1:], " (deleted)")
		key := fields[3] + " " + fields[4] + " " + path
		if !seen[key] {
			seen[key] = true
			out = append(out, mappedFile{path: path, inode: fields[3] + " " + fields[4]})
		}
	}
	return out, sc.Err()
}
