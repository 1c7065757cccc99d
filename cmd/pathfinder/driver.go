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
// and exitUsage on bad flags. With --format nfd or nodefeature it says the node's labels, and exits
// exitOK when the node's driver is usable (driver.Report.NodeUsable).
func cmdDriver(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	asJSON := fs.Bool("json", false, jsonDocumentHelp+" (the same as --format json; with --format nodefeature, the object as JSON)")
	format := fs.String("format", "text", "print `FORMAT`: text (the default), json (one JSON document), nfd (node-feature-discovery feature-file lines), nodefeature (NFD's NodeFeature object, YAML), or variant (the nvidia wheel-variant provider's configs as JSON; [] without a working driver); the labels of nfd and nodefeature come from the node's kernel module, PCI bus and DMI, none without a kernel module")
	methods := fs.String("methods", "", "a comma-separated `LIST` of methods to run, in order ("+strings.Join(driver.MethodNames(), ",")+"); default all")
	root := fs.String("root", "", "read /proc, /sys, /dev, /etc and the loader's directories under `DIR` (a captured machine); NVML, libcuda and nvidia-smi are not run")
	output := fs.String("output", "", "with --format nfd, write the feature file atomically into `DIR` instead of printing it")
	interval := fs.Duration("interval", 0, "with --format nfd --output DIR or --format nodefeature, probe again every `DURATION` (such as 60s) and write the labels again when they change, until SIGTERM; the feature file expires four intervals after it is written")
	oneshot := fs.Bool("oneshot", false, "write the labels once and exit: the default without --interval")
	node := fs.String("node", "", "with --format nodefeature, the Kubernetes `NAME` of this node (default $NODE_NAME)")
	return func(ctx context.Context, c *cli, args []string) int {
		if len(args) > 0 {
			return c.usageError("takes no arguments")
		}
		if *asJSON && *format != "nodefeature" {
			*format = "json"
		}
		out := labelOutput{format: *format, dir: *output, node: *node, json: *asJSON}
		if !slices.Contains(formats, *format) {
			return c.usageError("--format: unknown format %q%s", *format, didYouMeanOrValid(*format, formats))
		}
		if err := out.check(*interval, *oneshot, c.getenv); err != nil {
			return c.usageError("%v", err)
		}
		if err := checkMethods(*methods); err != nil {
			return c.usageError("%v", err)
		}
		opts, err := c.probeOptions(*root, *methods)
		if err == nil && *output != "" {
			err = isDir("--output", *output)
		}
		if err != nil {
			return c.usageError("%v", err)
		}
		if out.labels() {
			return c.label(ctx, out, opts, *interval)
		}
		r := driver.Probe(ctx, opts)
		// A pin that is not used would answer for the machine instead of the GPUs asked about.
		if i := slices.IndexFunc(r.Ignored, func(in driver.IgnoredInput) bool { return in.Name == driver.ComputeCapabilityPin }); i >= 0 {
			c.errorf("%s=%s: %s", r.Ignored[i].Name, r.Ignored[i].Value, r.Ignored[i].Reason)
			return exitUsage
		}
		switch {
		case *format == "text":
			err = writeDriverText(c.stdout, r)
		case *format == "json":
			err = writeJSONDocument(c.stdout, r)
		case *format == "variant":
			err = writeJSONDocument(c.stdout, r.VariantConfigs())
		}
		if err != nil {
			c.fail(err)
			return exitUsage
		}
		if r.Working() {
			return exitOK
		}
		if *format == "variant" {
			c.errorf("no working NVIDIA driver (%s: %s): no configs", r.State, r.Summary)
		}
		return exitNotFound
	}
}

// formats are the values driver's --format takes.
var formats = []string{"text", "json", "nfd", "nodefeature", "variant"}

// checkMethods checks each name in --methods.
func checkMethods(methods string) error {
	if methods == "" {
		return nil
	}
	for _, m := range strings.Split(methods, ",") {
		m = strings.TrimSpace(m)
		if !slices.Contains(driver.MethodNames(), m) {
			return fmt.Errorf("--methods: unknown method %q%s", m, didYouMeanOrValid(m, driver.MethodNames()))
		}
	}
	return nil
}

// probeOptions checks --root and reads --methods (checked by checkMethods), the flags driver and doctor share.
func (c *cli) probeOptions(root, methods string) (driver.Options, error) {
	opts := driver.Options{Root: root, LookupEnv: c.lookupEnv}
	if root != "" {
		if err := isDir("--root", root); err != nil {
			return opts, err
		}
	}
	if methods == "" {
		return opts, nil
	}
	for _, m := range strings.Split(methods, ",") {
		opts.Methods = append(opts.Methods, strings.TrimSpace(m))
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
