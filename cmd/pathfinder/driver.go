package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/driver"
)

func cmdDriver(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, "same as --format json")
	format := fs.String("format", "text", "text, json, or nfd (node-feature-discovery feature-file lines)")
	methods := fs.String("methods", "", "comma-separated `list` of methods to run, in order ("+strings.Join(driver.MethodNames(), ",")+"); default all")
	root := fs.String("root", "", "read /proc, /sys, /dev and the WSL paths under `DIR` (a captured machine)")
	output := fs.String("output", "", "with --format nfd, write the feature file atomically into `DIR` instead of printing it")
	return func(ctx context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			c.errorf("driver takes no arguments")
			return exitUsage
		}
		if *asJSON {
			*format = "json"
		}
		opts := driver.Options{Root: *root}
		if *methods != "" {
			opts.Methods = strings.Split(*methods, ",")
		}
		if *output != "" && *format != "nfd" {
			c.errorf("--output is for --format nfd")
			return exitUsage
		}
		r := driver.Probe(ctx, opts)
		var err error
		switch *format {
		case "text":
			err = r.WriteText(c.stdout)
		case "json":
			err = r.WriteJSON(c.stdout)
		case "nfd":
			if *output != "" {
				err = driver.WriteNFDFile(*output, r)
			} else {
				err = r.WriteNFD(c.stdout)
			}
		default:
			c.errorf("unknown format %q (text, json or nfd)", *format)
			return exitUsage
		}
		if err != nil {
			c.errorf("driver: %v", err)
			return exitUsage
		}
		if errors.Is(r.Err(), driver.ErrNoDriver) {
			return exitNotFound
		}
		return exitOK
	}
}

// driverSection is doctor's summary of the probe, with a warning when a found cudart is newer than
// the driver supports.
func driverSection(r *driver.Report, cudartPath string) []string {
	var lines []string
	if r.Err() != nil {
		lines = append(lines, fmt.Sprintf("driver         none (%s): 'pathfinder driver' shows every method", r.Platform))
		return lines
	}
	line := fmt.Sprintf("driver         %s (%s, from %s)", r.DriverVersion, r.Platform, r.DriverVersionSource)
	if r.MaxCUDA != "" {
		line += ", supports CUDA up to " + r.MaxCUDA
	}
	lines = append(lines, line)
	for _, g := range r.GPUs {
		cc := g.ComputeCapability
		if cc == "" {
			cc = "?"
		}
		lines = append(lines, fmt.Sprintf("  GPU %d        %s, compute capability %s (%s), %s", g.Index, g.Name, cc, g.ComputeCapabilitySource, g.PCIBusID))
	}
	if major := sonameMajor(cudartPath); major > 0 && r.MaxCUDA != "" {
		var maxMajor int
		fmt.Sscanf(r.MaxCUDA, "%d", &maxMajor)
		if maxMajor > 0 && major > maxMajor {
			lines = append(lines, fmt.Sprintf("  warning: cudart %s is CUDA %d, newer than this driver supports (CUDA %s): update the driver or use a CUDA %d runtime", cudartPath, major, r.MaxCUDA, maxMajor))
		}
	}
	return lines
}

// sonameMajor reads 13 from .../libcudart.so.13 or cudart64_13.dll; 0 when it cannot tell.
func sonameMajor(p string) int {
	var n int
	if i := strings.LastIndex(p, ".so."); i >= 0 {
		fmt.Sscanf(p[i+4:], "%d", &n)
	} else if i := strings.LastIndex(p, "cudart64_"); i >= 0 {
		fmt.Sscanf(p[i+9:], "%d", &n)
	}
	return n
}
