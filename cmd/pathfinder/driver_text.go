package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/pathfinder-dev/pathfinder/host/driver"
)

// writeDriverText writes driver's report for people: the state in one line with its hint, the facts
// with their sources, the driver's libraries, the GPUs, and every method's outcome.
func writeDriverText(w io.Writer, r *driver.Report) error {
	if r.Summary != "" {
		fmt.Fprintln(w, r.Summary)
	}
	if r.Hint != "" {
		fmt.Fprintf(w, "hint: %s\n", r.Hint)
	}
	if r.Summary != "" || r.Hint != "" {
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fact := func(label, value, source string) {
		if value == "" {
			return
		}
		if source != "" {
			value += " (" + source + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\n", label, value)
	}
	fact("state", string(r.State), "")
	fmt.Fprintf(tw, "setup\t%s\n", r.Setup)
	src := r.DriverVersionSource
	if r.KernelModule != "" {
		src += "; " + r.KernelModule + " kernel module"
	}
	if r.DriverVersion == "" {
		fmt.Fprintf(tw, "driver\tnot found\n")
	}
	fact("driver", r.DriverVersion, src)
	if r.UserSpace != nil {
		v := r.UserSpaceVersion
		if v == "" {
			v = "not found"
			if slices.ContainsFunc(r.UserSpace, driver.UserSpaceLibrary.Found) { // a name without a version
				v = "version unknown"
			}
		}
		fmt.Fprintf(tw, "user-space driver\t%s\n", v)
		for _, l := range r.UserSpace {
			fmt.Fprintf(tw, "  %s\t%s\n", l.Soname, describeUserSpaceLibrary(l))
		}
	}
	fact("l4t release", r.L4TRelease, "")
	fact("cuda driver", r.CUDADriverVersion, r.CUDADriverVersionSource)
	maxFrom := r.MaxCUDARelease
	if r.MaxCUDASource == driver.MaxCUDAFromUserSpace {
		maxFrom += "; by the user-space driver " + r.UserSpaceVersion + ", no kernel module's version known"
	}
	fact("max cuda toolkit", r.MaxCUDA, maxFrom)
	for i, s := range r.Runs {
		label := "runs"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(tw, "%s\tCUDA %s: %s\n", label, s.CUDA, s)
	}
	fmt.Fprintf(tw, "gpus\t%d\n", len(r.GPUs))
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, g := range r.GPUs {
		cc := "cc ?"
		if g.ComputeCapability != "" {
			cc = "cc " + g.ComputeCapability + " (" + g.ComputeCapabilitySource + ")"
		}
		line := fmt.Sprintf("  %d\t%s\t%s\t%s\t%s", g.Index, orDash(g.Name), orDash(g.PCIBusID), orDash(g.DeviceID), cc)
		if g.UUID != "" {
			line += "\t" + g.UUID
		}
		if g.KernelDriver != "" && g.KernelDriver != "nvidia" {
			line += "\tbound to " + g.KernelDriver
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "methods")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, m := range r.Methods {
		fmt.Fprintf(tw, "  %s\t%s\t%v\t%s\n", m.Name, m.Outcome, m.Duration.Round(time.Microsecond), m.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "notes")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	_, err := fmt.Fprintf(w, "took %v\n", r.Duration.Round(time.Microsecond))
	return err
}

// describeUserSpaceLibrary says where the loader would find the library.
func describeUserSpaceLibrary(l driver.UserSpaceLibrary) string {
	if l.Error != "" {
		return l.Error
	}
	d := l.Path
	if l.RealPath != l.Path {
		d += " → " + filepath.Base(l.RealPath)
	}
	d += " (" + l.Via + ")"
	switch {
	case l.Stub:
		d += ": the CUDA toolkit's stub, not the driver's"
	case l.Compat:
		d += ": CUDA forward compatibility"
	}
	return d
}

// orDash is s, or "-" where a column has no value.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
