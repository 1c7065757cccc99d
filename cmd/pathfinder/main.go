// Command pathfinder finds and loads NVIDIA libraries and tells what driver and GPUs a machine has.
//
//	pathfinder doctor            where each library would come from, or why not
//	pathfinder find cudart       the absolute path of a library
//	pathfinder explain cudnn     every step, every candidate and why
//
// Run `pathfinder help` for every command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host"
)

// Exit codes.
const (
	exitOK       = 0
	exitNotFound = 1 // something was not found, unknown or not available
	exitUsage    = 2 // bad usage or a config error
)

func main() {
	os.Exit(doMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// command is one subcommand: its flags, what it takes, and what it does.
type command struct {
	name, args, summary string
	flags               func(fs *flag.FlagSet) func(ctx context.Context, c *cli, names []string) int
}

var commands []*command // filled in init to break the initialization cycle with help

func init() {
	commands = []*command{
		{"find", "NAME...", "print where each library (or header set, binary, static or bitcode library) is, without loading it", cmdFind},
		{"load", "NAME...", "load each library (and its dependencies) into a process and print its path", cmdLoad},
		{"explain", "NAME", "show every step, every candidate, and why each was taken or refused", cmdExplain},
		{"list", "", "list every known library, its category and whether this platform has it", cmdList},
		{"doctor", "", "one screen: where each library would come from, or why not, and the driver", cmdDoctor},
		{"driver", "", "the NVIDIA driver, the highest CUDA it supports, and each GPU with its compute capability", cmdDriver},
		{"packs", "", "list the descriptor packs that were read, what each defines, and where packs are looked for", cmdPacks},
		{"plugins", "", "list every plugin step: source, sha256, ABI version and what the config grants it", cmdPlugins},
		{"config", "[check FILE]", "print the effective configuration and where each value came from, or check one file", cmdConfig},
		{"plugin", "new NAME [DIR]", "create a search plugin that builds and passes its own test, to start from", cmdPlugin},
		{"completion", "bash|zsh|fish", "print a shell completion script", cmdCompletion},
		{"help", "[COMMAND]", "show help for a command", cmdHelp},
	}
}

// cli is what every command shares: the streams and the global flags.
type cli struct {
	stdout, stderr io.Writer
	configFile     string
	target         string // --target os/arch, where a command takes it
	finder         *host.Finder
}

func (c *cli) open() (*host.Finder, error) {
	if c.finder == nil {
		opts := host.Options{ConfigFile: c.configFile}
		if c.target != "" {
			p, err := host.ParsePlatform(c.target)
			if err != nil {
				return nil, err
			}
			opts.Platform = p
		}
		f, err := host.New(opts)
		if err != nil {
			return nil, err
		}
		c.finder = f
	}
	return c.finder, nil
}

func (c *cli) errorf(format string, args ...any) {
	fmt.Fprintf(c.stderr, "pathfinder: "+format+"\n", args...)
}

func doMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &cli{stdout: stdout, stderr: stderr}
	defer func() {
		if c.finder != nil {
			c.finder.Close()
		}
	}()
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, versionString())
		return exitOK
	}
	cmd := lookup(name)
	if cmd == nil {
		c.errorf("unknown command %q; run 'pathfinder help'", name)
		return exitUsage
	}
	fs := flag.NewFlagSet("pathfinder "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.configFile, "config", "", "read this config `file` last, after the system and user files and $PATHFINDER_CONFIG")
	help := fs.Bool("help", false, "show this help")
	fs.BoolVar(help, "h", false, "show this help")
	run := cmd.flags(fs)
	names, err := parseInterleaved(fs, args[1:])
	if err != nil {
		c.errorf("%s: %v", cmd.name, err)
		fmt.Fprintf(stderr, "usage: pathfinder %s %s (see 'pathfinder help %s')\n", cmd.name, cmd.args, cmd.name)
		return exitUsage
	}
	if *help {
		commandUsage(stdout, cmd, fs)
		return exitOK
	}
	return run(ctx, c, names)
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// parseInterleaved parses flags wherever they appear among the arguments, so that
// `pathfinder find cudart --json` works as well as `pathfinder find --json cudart`. "--" ends flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, names []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			names = append(names, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			names = append(names, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("unknown flag %s", a)
		}
		flags = append(flags, a)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		return nil, err
	}
	return names, nil
}

func usage(w io.Writer) {
	fmt.Fprint(w, `pathfinder finds and loads NVIDIA libraries (cudart, nvrtc, cublas, cudnn, nccl, nvml, libcuda, ...)
from pip wheels, conda, CUDA_HOME/CUDA_PATH and the system loader, every search step a sandboxed plugin.

usage: pathfinder COMMAND [ARGS] [FLAGS]

commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Flags may come before or after the names. Every command takes --help and --config FILE.
Exit status: 0 when everything asked for was found, 1 when something was not found, unknown or not
available on this platform, 2 on a usage or configuration error. driver exits 1 when the machine has
no working NVIDIA driver; doctor exits 1 when it lists a problem.
`)
}

func commandUsage(w io.Writer, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: pathfinder %s %s [FLAGS]\n\n%s\n\nflags:\n", cmd.name, cmd.args, cmd.summary)
	var lines []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "h" {
			return
		}
		arg, text := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + arg
		}
		lines = append(lines, fmt.Sprintf("  --%s%s\n        %s", f.Name, arg, text))
	})
	sort.Strings(lines)
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}

func cmdHelp(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	return func(_ context.Context, c *cli, names []string) int {
		if len(names) == 0 {
			usage(c.stdout)
			return exitOK
		}
		cmd := lookup(names[0])
		if cmd == nil {
			c.errorf("unknown command %q", names[0])
			return exitUsage
		}
		sub := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
		sub.String("config", "", "read this config `file` last, after the system and user files and $PATHFINDER_CONFIG")
		sub.Bool("help", false, "show this help")
		cmd.flags(sub)
		commandUsage(c.stdout, cmd, sub)
		return exitOK
	}
}

// configError reports an error from opening the Finder (a config or pack problem).
func (c *cli) configError(err error) int {
	c.printError(err)
	return exitUsage
}

// printError prints err with the program's prefix, which no package's error carries: once per
// line, as errors.Join puts each error on a line of its own.
func (c *cli) printError(err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		c.errorf("%s", line)
	}
}

func isSearchError(err error) (*host.SearchError, bool) {
	var se *host.SearchError
	ok := errors.As(err, &se)
	return se, ok
}
