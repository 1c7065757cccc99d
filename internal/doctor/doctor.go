// Package doctor is `pathfinder doctor`'s diagnosis: it gathers what the search engine, the driver
// probe and a running process tell (Gather) and lists each setup failure people hit in them, with
// its fix (Diagnose). The command prints both.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/report"
)

// Facts is everything the diagnosis reads: the engine's answers, the driver report, the
// environment, and the mapped files of a process.
type Facts struct {
	Platform    abi.Platform
	ConfigFiles []string
	Sites       []string // the site-packages directories the wheels step searches
	Cache       inspect.Cache
	Getenv      func(string) string
	Libraries   []Answer // every dynamic library of the catalog, in its order
	Driver      *driver.Report
	Compat      *search.CompatibilityTrace // what the search's compatibility check knew
	PID         int
	Maps        []loader.Mapping // the files process PID maps, each once; nil without a PID
	Ignored     []report.Ignored // inputs the engine and the driver probe did not use, and why
}

// Answer is the engine's answer for one library.
type Answer struct {
	search.LibraryInfo
	Descriptor abi.Descriptor  // where a search looks for it
	Found      *search.Library // nil when not found
	Err        error
}

// Gather finds every library, in the catalog's order and one after another, as a program that
// asked for them all would: the first answer with a known CUDA version anchors the rest. With a
// pid > 0 it reads the files that process maps; the error is that it could not.
func Gather(ctx context.Context, e *engine.Engine, drv *driver.Report, pid int, getenv func(string) string) (*Facts, error) {
	d := &Facts{
		Platform: e.Platform(), ConfigFiles: e.ConfigFiles(), Sites: e.SitePackages(),
		Getenv: getenv, PID: pid, Driver: drv,
	}
	if pid > 0 {
		var err error
		if d.Maps, err = mappedFiles(pid); err != nil {
			return nil, err
		}
	}
	infos := e.Libraries(engine.DynamicLib)
	d.Libraries = make([]Answer, len(infos))
	for i, l := range infos {
		a := &d.Libraries[i]
		a.LibraryInfo = l
		a.Descriptor, _ = e.Descriptor(engine.DynamicLib, l.Name)
		if l.Available {
			a.Found, a.Err = e.Find(ctx, l.Name)
		}
	}
	d.Compat = e.Compatibility()
	d.Cache = e.Cache()                                          // after the searches: what writing their answers met
	d.Ignored = append(e.IgnoredInputs(), driverIgnored(drv)...) // after the searches: their steps say what they passed over
	return d, nil
}

// driverIgnored is what the driver probe was given and did not use, as doctor reads it. The
// public report carries the reason without its kind; the probe refuses a relative path with
// report.RelativePath, whose reason is report.RelativeReason to the letter, and anything else as
// unusable.
func driverIgnored(drv *driver.Report) []report.Ignored {
	var out []report.Ignored
	for _, in := range drv.Ignored {
		why := report.Unusable
		if in.Reason == report.RelativeReason {
			why = report.Relative
		}
		out = append(out, report.Ignored{Name: in.Name, Value: in.Value, Reason: in.Reason, Why: why})
	}
	return out
}

// Library returns the answer for name, or nil.
func (d *Facts) Library(name string) *Answer {
	for i := range d.Libraries {
		if d.Libraries[i].Name == name {
			return &d.Libraries[i]
		}
	}
	return nil
}

// mappedFiles lists the distinct files process pid maps, by file and path.
func mappedFiles(pid int) ([]loader.Mapping, error) {
	listing, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no process %d (its libraries are read from /proc/%d/maps, on Linux)", pid, pid)
	}
	if err != nil {
		return nil, fmt.Errorf("process %d: %v", pid, errors.Unwrap(err))
	}
	var out []loader.Mapping
	seen := map[[2]string]bool{}
	for _, m := range loader.ParseMaps(string(listing)) {
		if key := [2]string{m.File, m.Path}; m.Path != "" && !seen[key] {
			seen[key] = true
			out = append(out, m)
		}
	}
	return out, nil
}
