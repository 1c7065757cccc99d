package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/driver"
)

// driver exits exitOK when the driver works (driver.Report.Working), exitNotFound when it does not,
// and exitUsage on bad flags.
func cmdDriver(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, "same as --format json")
	format := fs.String("format", "text", "text, json, or nfd (node-feature-discovery feature-file lines; none without a working driver)")
	methods := fs.String("methods", "", "comma-separated `list` of methods to run, in order ("+strings.Join(driver.MethodNames(), ",")+"); default all")
	root := fs.String("root", "", "read /proc, /sys, /dev, /etc and the loader's directories under `DIR` (a captured machine); NVML, libcuda and nvidia-smi are not run")
	output := fs.String("output", "", "with --format nfd, write the feature file atomically into `DIR` instead of printing it")
	return func(ctx context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			c.errorf("driver takes no arguments")
			return exitUsage
		}
		if *asJSON {
			*format = "json"
		}
		if !slices.Contains([]string{"text", "json", "nfd"}, *format) {
			c.errorf("unknown format %q (text, json or nfd)", *format)
			return exitUsage
		}
		if *output != "" && *format != "nfd" {
			c.errorf("--output is for --format nfd")
			return exitUsage
		}
		opts, err := probeOptions(*root, *methods)
		if err == nil && *output != "" {
			err = isDir("--output", *output)
		}
		if err != nil {
			c.fail(err)
			return exitUsage
		}
		r := driver.Probe(ctx, opts)
		switch {
		case *format == "text":
			err = r.WriteText(c.stdout)
		case *format == "json":
			err = r.WriteJSON(c.stdout)
		case *output != "":
			err = driver.WriteNFDFile(*output, r)
		default:
			err = r.WriteNFD(c.stdout)
		}
		if err != nil {
			c.fail(err)
			return exitUsage
		}
		if r.Working() {
			return exitOK
		}
		if *format == "nfd" {
			where := "no labels written"
			if *output != "" {
				where = "the feature file in " + *output + " has no labels"
			}
			c.errorf("no working NVIDIA driver (%s: %s): %s", r.State, r.Summary, where)
		}
		return exitNotFound
	}
}

// probeOptions checks --root and --methods, the flags driver and doctor share.
func probeOptions(root, methods string) (driver.Options, error) {
	opts := driver.Options{Root: root}
	if root != "" {
		if err := isDir("--root", root); err != nil {
			return opts, err
		}
	}
	if methods == "" {
		return opts, nil
	}
	for _, m := range strings.Split(methods, ",") {
		m = strings.TrimSpace(m)
		if !slices.Contains(driver.MethodNames(), m) {
			return opts, fmt.Errorf("--methods: unknown method %q (valid: %s)", m, strings.Join(driver.MethodNames(), ", "))
		}
		opts.Methods = append(opts.Methods, m)
	}
	return opts, nil
}

func isDir(flagName, path string) error {
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return fmt.Errorf("%s %s: no such directory", flagName, path)
	case err != nil:
		return fmt.Errorf("%s: %v", flagName, err)
	case !fi.IsDir():
		return fmt.Errorf("%s %s: not a directory", flagName, path)
	}
	return nil
}

// fail prints err with the program's prefix.
func (c *cli) fail(err error) { c.printError(err) }
