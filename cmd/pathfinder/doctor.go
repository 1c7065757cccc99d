package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/pathfinder-dev/pathfinder/host"
	"github.com/pathfinder-dev/pathfinder/host/driver"
)

func cmdDoctor(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	root := fs.String("root", "", "probe the driver under `DIR` instead of / (see 'pathfinder driver --help')")
	return func(ctx context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			c.errorf("doctor takes no arguments")
			return exitUsage
		}
		f, err := c.open()
		if err != nil {
			return c.configError(err)
		}
		writeDoctor(ctx, c.stdout, f, driver.Options{Root: *root})
		return exitOK
	}
}

type doctorRow struct {
	lib *host.Library
	err error
}

func writeDoctor(ctx context.Context, w io.Writer, f *host.Finder, probe driver.Options) {
	report := make(chan *driver.Report, 1)
	go func() { report <- driver.Probe(ctx, probe) }()
	fmt.Fprintf(w, "%s on %s\n\n", versionString(), f.Platform())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "config\t%s\n", strings.Join(f.ConfigFiles(), ", "))
	sites := f.SitePackages()
	if len(sites) == 0 {
		fmt.Fprintf(tw, "site-packages\t(none found: set VIRTUAL_ENV or PATHFINDER_SITE_PACKAGES)\n")
	}
	for i, s := range sites {
		label := ""
		if i == 0 {
			label = "site-packages"
		}
		fmt.Fprintf(tw, "%s\t%s\n", label, s)
	}
	var env []string
	for _, v := range []string{"CONDA_PREFIX", "CUDA_PATH", "CUDA_HOME", "CUDNN_PATH", "NCCL_HOME"} {
		if val := os.Getenv(v); val != "" {
			env = append(env, v+"="+val)
		}
	}
	if len(env) == 0 {
		env = []string{"(none of CONDA_PREFIX, CUDA_PATH, CUDA_HOME, CUDNN_PATH, NCCL_HOME is set)"}
	}
	fmt.Fprintf(tw, "environment\t%s\n", strings.Join(env, "  "))
	cache := f.CacheDir()
	if cache == "" {
		cache = "(off)"
	}
	fmt.Fprintf(tw, "compile cache\t%s\n", cache)
	tw.Flush()

	libs := f.Libraries(host.DynamicLib)
	rows := make([]doctorRow, len(libs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, l := range libs {
		if !l.Available {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rows[i].lib, rows[i].err = f.Find(ctx, l.Name)
		}()
	}
	wg.Wait()

	width := 0
	for _, l := range libs {
		width = max(width, len(l.Name))
	}
	found, avail := 0, 0
	category := ""
	for i, l := range libs {
		if l.Category != category {
			category = l.Category
			fmt.Fprintf(w, "\n%s libraries\n", category)
		}
		r := rows[i]
		switch {
		case !l.Available:
			fmt.Fprintf(w, "  %-*s  -  not available on %s\n", width, l.Name, f.Platform())
		case r.err == nil:
			avail++
			found++
			fmt.Fprintf(w, "  %-*s  ✓  %s  (%s)\n", width, l.Name, r.lib.Path, r.lib.FoundVia)
		default:
			avail++
			msg := r.err.Error()
			if se, ok := isSearchError(r.err); ok && errors.Is(se, host.ErrNotFound) {
				msg = fmt.Sprintf("not found (looked for %s in %d places)", strings.Join(se.Looked, " or "), len(se.Attempts))
			}
			fmt.Fprintf(w, "  %-*s  ✗  %s\n", width, l.Name, strings.TrimPrefix(msg, "pathfinder: "))
		}
	}
	cudart := ""
	for i, l := range libs {
		if l.Name == "cudart" && rows[i].lib != nil {
			cudart = rows[i].lib.Path
		}
	}
	fmt.Fprintln(w)
	for _, l := range driverSection(<-report, cudart) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "\n%d of %d libraries available on %s found. 'pathfinder explain NAME' shows every step for one.\n", found, avail, f.Platform())
}
