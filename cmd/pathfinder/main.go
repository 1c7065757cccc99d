// Command pathfinder finds and loads NVIDIA libraries and tells what driver and GPUs a machine has.
//
//	pathfinder doctor            where each library would come from, or why not
//	pathfinder find cudart       the absolute path of a library
//	pathfinder explain cudnn     the search step by step, up to the step that finds it
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
	"slices"
	"sort"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
)

// Exit codes.
const (
	exitOK       = 0
	exitNotFound = 1 // something was not found, found but refused, not loadable or incompatible, unknown or not available
	exitUsage    = 2 // bad usage or a config error
)

func main() {
	os.Exit(doMain(context.Background(), environment{Args: os.Args[1:], LookupEnv: os.LookupEnv, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// environment is what the command reads of the process that runs it: main fills it from the
// process, a test fills it itself. Children the command starts (the driver probe's) and relative
// paths still see the process's own environment and working directory.
type environment struct {
	Args           []string // after the program's name
	LookupEnv      func(key string) (string, bool)
	Stdout, Stderr io.Writer
}

// command is one subcommand: its flags, what it takes, and what it does. args names what follows the
// command in its usage line: placeholders in capitals (NAME, FILE, DIR), literal words in lower case.
type command struct {
	name, args, summary string
	flags               func(fs *flag.FlagSet) func(ctx context.Context, c *cli, names []string) int
	readsConfig         bool // it reads the configuration, so it takes --config FILE
}

var commands []*command // filled in init to break the initialization cycle with help

func init() {
	commands = []*command{
		{"find", "NAME...", "print where each library (or header set, binary, static or bitcode library) is, without loading it", cmdFind, true},
		{"load", "NAME...", "load each library (and its dependencies) into a process and print its path", cmdLoad, true},
		{"explain", "NAME", "show the search step by step, up to the step that finds it: each place, each candidate and why", cmdExplain, true},
		{"list", "", "list every known library, its category and whether this platform has it", cmdList, true},
		{"doctor", "", "one screen: where each library would come from, or why not, and the driver", cmdDoctor, true},
		{"driver", "", "the NVIDIA driver, the highest CUDA it supports, and each GPU with its compute capability", cmdDriver, false},
		{"packs", "", "list the descriptor packs that were read, what each defines, and where packs are looked for", cmdPacks, true},
		{"plugins", "", "list every search step: the host's own and what each looks at, then each plugin's source, sha256, ABI version and grants", cmdPlugins, true},
		{"config", "[check FILE]", "print the effective configuration and where each value came from, or check one file", cmdConfig, true},
		{"plugin", "new NAME [DIR]", "create a search plugin that builds and passes its own test, to start from", cmdPlugin, false},
		{"completion", "bash|zsh|fish", "print a shell completion script: commands, flags, their values, and the names of the --kind given", cmdCompletion, false},
		{"version", "", "print pathfinder's version", cmdVersion, false},
		{"help", "[COMMAND]", "show help for a command", cmdHelp, false},
	}
}

// usageLine is the command's one-line synopsis, the same in its help and after a usage error.
func (cmd *command) usageLine() string {
	parts := []string{"usage: pathfinder", cmd.name}
	if cmd.args != "" {
		parts = append(parts, cmd.args)
	}
	return strings.Join(append(parts, "[FLAGS]"), " ")
}

// flagSet is the command's flags, with --help, which every command takes, and --config for those
// that read the configuration, and what runs it.
func (cmd *command) flagSet(configFile *string) (*flag.FlagSet, *bool, func(context.Context, *cli, []string) int) {
	fs := flag.NewFlagSet("pathfinder "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if cmd.readsConfig {
		fs.StringVar(configFile, "config", "", "read this config `FILE` last, after the system and user files and $PATHFINDER_CONFIG")
	}
	help := fs.Bool("help", false, "show this help")
	fs.BoolVar(help, "h", false, "show this help")
	return fs, help, cmd.flags(fs)
}

// globalUsage is the synopsis of pathfinder itself.
const globalUsage = "usage: pathfinder COMMAND [ARGS] [FLAGS]"

// cli is what every command shares: the streams, the environment and the global flags.
type cli struct {
	stdout, stderr io.Writer
	lookupEnv      func(key string) (string, bool)
	cmd            *command // the command running, for its usage line
	configFile     string
	target         string // --target os/arch, where a command takes it
	// driver is the driver the Engine's compatibility check holds candidates to, where the command
	// probed it already (doctor, whose --root may name a captured machine); nil probes this one.
	driver *driver.Report
	finder *engine.Engine
}

func (c *cli) open() (*engine.Engine, error) {
	if c.finder == nil {
		opts := engine.Options{ConfigFile: c.configFile, Driver: c.driver, LookupEnv: c.lookupEnv}
		if c.target != "" {
			p, err := engine.ParsePlatform(c.target)
			if err != nil {
				return nil, err
			}
			opts.Platform = p
		}
		f, err := engine.New(opts)
		if err != nil {
			return nil, err
		}
		c.finder = f
	}
	return c.finder, nil
}

// getenv is the variable key of the command's environment, "" when unset.
func (c *cli) getenv(key string) string {
	v, _ := c.lookupEnv(key)
	return v
}

// errorf prints one message line, escaped: it may hold a value from the environment or a file's
// name, and none may forge a line or act on the terminal.
func (c *cli) errorf(format string, args ...any) {
	fmt.Fprintf(c.stderr, "pathfinder: %s\n", printable.String(fmt.Sprintf(format, args...)))
}

// fail prints err with the "pathfinder: " prefix, once on each of its lines (config check joins
// several problems): the host's errors carry no prefix of their own.
func (c *cli) fail(err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		c.errorf("%s", line)
	}
}

// usageError reports a mistake in the command line itself (its arguments, flags and flag values, a
// directory a flag names that is not there): what is wrong, then the command's usage line and where
// its help is. Errors in files (a config, a pack) are not usage errors and print no usage line.
func (c *cli) usageError(format string, args ...any) int {
	c.errorf(c.cmd.name+": "+format, args...)
	fmt.Fprintf(c.stderr, "%s\nrun 'pathfinder help %s' for details\n", c.cmd.usageLine(), c.cmd.name)
	return exitUsage
}

func doMain(ctx context.Context, env environment) int {
	args, stdout, stderr := env.Args, env.Stdout, env.Stderr
	c := &cli{stdout: stdout, stderr: stderr, lookupEnv: env.LookupEnv}
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
	case "--version":
		fmt.Fprintln(stdout, versionString())
		return exitOK
	case completeCommand:
		return c.complete(args[1:])
	}
	cmd := lookup(name)
	if cmd == nil {
		if strings.HasPrefix(name, "-") {
			c.errorf("%s: flags follow the command%s", name, flagsAfter(args))
		} else {
			c.errorf("unknown command %q%s", name, didYouMean(name, commandNames(), "%q"))
		}
		fmt.Fprintf(stderr, "%s\nrun 'pathfinder help' for every command\n", globalUsage)
		return exitUsage
	}
	c.cmd = cmd
	fs, help, run := cmd.flagSet(&c.configFile)
	names, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return c.usageError("%v", err)
	}
	if *help {
		commandUsage(stdout, cmd, fs)
		return exitOK
	}
	return run(ctx, c, names)
}

// flagsAfter is the line args meant, the command first: ", as in 'pathfinder find cudart --config f'".
func flagsAfter(args []string) string {
	for i, a := range args {
		if lookup(a) != nil {
			return fmt.Sprintf(", as in 'pathfinder %s'", strings.Join(slices.Concat(args[i:], args[:i]), " "))
		}
	}
	return ""
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// commandNames are the names a user may type first, for suggestions and completion.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for _, c := range commands {
		names = append(names, c.name)
	}
	return names
}

// parseInterleaved parses flags wherever they appear among the arguments, so that
// `pathfinder find cudart --json` works as well as `pathfinder find --json cudart`. "--" ends flags.
// A value a flag cannot take is told in our words, with the flag as the user wrote it.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var names []string
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
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("unknown flag %s%s", a, didYouMean(name, flagNames(fs), "--%s"))
		}
		switch {
		case hasValue:
		case isBoolFlag(f):
			value = "true"
		case i+1 >= len(args):
			return nil, fmt.Errorf("flag %s needs a value", a)
		default:
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			return nil, fmt.Errorf("--%s: %q is not %s", name, value, flagValueNoun(f))
		}
	}
	return names, nil
}

// flagValueNoun says what a flag takes, for a value it cannot take.
func flagValueNoun(f *flag.Flag) string {
	if isBoolFlag(f) {
		return "true or false"
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, ok := g.Get().(int); ok {
			return "a whole number"
		}
	}
	return "a value it takes"
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagNames are the flags a user sees in the help (not -h).
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != "h" {
			names = append(names, f.Name)
		}
	})
	return names
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `pathfinder finds and loads NVIDIA libraries (cudart, nvrtc, cublas, cudnn, nccl, nvml, libcuda, ...)
from pip wheels, conda, CUDA_HOME/CUDA_PATH and the system loader, every search step a sandboxed plugin.

%s

commands:
`, globalUsage)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Flags may come before or after the names, after the command. Every command takes --help; those
that read the configuration (find, load, explain, list, doctor, packs, plugins, config) take
--config FILE.
--json: find, load, list, plugins and config print one JSON object per line, one per name (library,
step or key); explain, driver, packs and doctor print one JSON document. config check FILE --json
prints one object, for the file: file, ok, problems. plugin, completion, version and help print
text only.
Exit status: 0 when everything asked for was found (for find, also a file the loader would
refuse: it prints the path, warns on stderr and says why in load_problem, as it loads nothing), 1
when something was not found, found but refused, not loadable by load, found but of no CUDA this
machine runs, unknown or not available on this platform, 2 on a usage or configuration error. driver exits 1 when the machine has no working NVIDIA driver; doctor exits 1 when it lists a
problem.
`)
}

func commandUsage(w io.Writer, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\n%s\n\nflags:\n", cmd.usageLine(), cmd.summary)
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
		if len(names) > 1 {
			return c.usageError("takes one command")
		}
		cmd := lookup(names[0])
		if cmd == nil {
			return c.usageError("unknown command %q%s", names[0], didYouMean(names[0], commandNames(), "%q"))
		}
		sub, _, _ := cmd.flagSet(new(string))
		commandUsage(c.stdout, cmd, sub)
		return exitOK
	}
}

// configError reports an error from opening the Engine (a config or pack problem).
func (c *cli) configError(err error) int {
	c.fail(err)
	return exitUsage
}

func isSearchError(err error) (*engine.SearchError, bool) {
	var se *engine.SearchError
	ok := errors.As(err, &se)
	return se, ok
}

// parseKind reads --kind, suggesting the nearest kind for a typo.
func (c *cli) parseKind(s string) (engine.Kind, bool) {
	k, err := engine.ParseKind(s)
	if err != nil {
		var kinds []string
		for _, k := range engine.Kinds() {
			kinds = append(kinds, string(k))
		}
		c.usageError("--kind: unknown kind %q%s", s, didYouMeanOrValid(s, kinds))
		return "", false
	}
	return k, true
}

// targets are the values --target takes; a test holds them to engine.ParsePlatform.
var targets = catalog.Targets

// checkTarget reads --target ("" is this machine).
func (c *cli) checkTarget(s string) bool {
	if s == "" {
		return true
	}
	if _, err := engine.ParsePlatform(s); err != nil {
		c.usageError("--target: unknown target %q%s", s, didYouMeanOrValid(s, targets))
		return false
	}
	return true
}
