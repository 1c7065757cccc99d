package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHelp_golden: every command's help, the same from `CMD --help` and `help CMD`, and pathfinder's.
func TestHelp_golden(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	for _, c := range commands {
		out, _, code := e.run(t, c.name, "--help")
		if code != exitOK {
			t.Fatalf("%s --help: exit %d", c.name, code)
		}
		if again, _, _ := e.run(t, "help", c.name); again != out {
			t.Errorf("help %s differs from %s --help:\n%s\n---\n%s", c.name, c.name, again, out)
		}
		golden(t, "help/"+c.name+".txt", out)
	}
	out, _, code := e.run(t, "--help")
	if code != exitOK {
		t.Fatalf("--help: exit %d", code)
	}
	if again, _, _ := e.run(t, "help"); again != out {
		t.Errorf("help differs from --help")
	}
	golden(t, "help/pathfinder.txt", out)
}

// usageLineRE is the one usage-line format: literal words in lower case, placeholders in capitals
// (NAME, NAME..., [DIR]), alternatives with |, single spaces, [FLAGS] last.
var usageLineRE = regexp.MustCompile(`^usage: pathfinder [a-z]+( (\[?([a-z]+|[A-Z]+(\.\.\.)?)( [A-Z]+)?\]?|[a-z]+(\|[a-z]+)+))* \[FLAGS\]$`)

// TestHelp_usageLineAndPlaceholders: each help starts with the command's usage line in the one
// format, and every flag that takes a value names it in capitals (FILE, DIR, LIST, KIND, ...).
func TestHelp_usageLineAndPlaceholders(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	flagLine := regexp.MustCompile(`^  --([a-z-]+)( (.*))?$`)
	placeholder := regexp.MustCompile(`^[A-Z][A-Z/]*$`)
	for _, c := range commands {
		out, _, _ := e.run(t, c.name, "--help")
		first, _, _ := strings.Cut(out, "\n")
		if first != c.usageLine() || !usageLineRE.MatchString(first) {
			t.Errorf("%s: usage line %q (want %q in the one format)", c.name, first, c.usageLine())
		}
		fs, _, _ := c.flagSet(new(string))
		seen := 0
		for _, line := range strings.Split(out, "\n") {
			m := flagLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			seen++
			f := fs.Lookup(m[1])
			switch {
			case f == nil:
				t.Errorf("%s: help names --%s, which it does not take", c.name, m[1])
			case isBoolFlag(f) && m[3] != "":
				t.Errorf("%s: --%s takes no value but shows %q", c.name, m[1], m[3])
			case !isBoolFlag(f) && !placeholder.MatchString(m[3]):
				t.Errorf("%s: --%s shows the placeholder %q, want one in capitals", c.name, m[1], m[3])
			}
		}
		if seen != len(flagNames(fs)) {
			t.Errorf("%s: help shows %d flags, it takes %d", c.name, seen, len(flagNames(fs)))
		}
	}
	// A line such as "usage: pathfinder list  [FLAGS]" (two spaces) is not in the format.
	if usageLineRE.MatchString("usage: pathfinder list  [FLAGS]") {
		t.Fatal("usageLineRE accepts a double space")
	}
}

// TestUsageErrors_usageLine: a mistake in any command's command line says what is wrong, prefixed
// once, then the command's usage line (the first line of its help) and where the help is; exit 2.
func TestUsageErrors_usageLine(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	tests := []struct {
		args []string
		want string // the first line, after "pathfinder: CMD: "
	}{
		{[]string{"find"}, "no library named; 'pathfinder list' lists them"},
		{[]string{"find", "cudart", "--jsn"}, "unknown flag --jsn (did you mean --json?)"},
		{[]string{"find", "cudart", "--kind"}, "flag --kind needs a value"},
		{[]string{"find", "cudart", "--kind", "shader"}, `--kind: unknown kind "shader" (valid: dynamic-lib, header-dir, binary, static-lib, bitcode)`},
		{[]string{"find", "cudart", "--target", "plan9/mips"}, `--target: unknown target "plan9/mips" (valid: linux/amd64, linux/arm64, windows/amd64, windows/arm64)`},
		{[]string{"find", "cccl", "--kind", "header-dir", "--all-from-one-toolkit"}, "--all-from-one-toolkit is for dynamic libraries"},
		{[]string{"load"}, "no library named; 'pathfinder list' lists them"},
		{[]string{"load", "cudart", "--target", "windows/amd64"}, "unknown flag --target"},
		{[]string{"explain"}, "takes one library name"},
		{[]string{"explain", "cudart", "--kind", "headerdir"}, `--kind: unknown kind "headerdir" (did you mean "header-dir"?)`},
		{[]string{"list", "cudart"}, "takes no arguments"},
		{[]string{"list", "--kind", "binry"}, `--kind: unknown kind "binry" (did you mean "binary"?)`},
		{[]string{"list", "--target", "windows"}, `--target: unknown target "windows" (valid: linux/amd64, linux/arm64, windows/amd64, windows/arm64)`},
		{[]string{"doctor", "cudart"}, "takes no arguments"},
		{[]string{"driver", "cudart"}, "takes no arguments"},
		{[]string{"driver", "--format", "yml"}, `--format: unknown format "yml" (valid: text, json, nfd, nodefeature, variant)`},
		{[]string{"packs", "x"}, "takes no arguments"},
		{[]string{"plugins", "x"}, "takes no arguments"},
		{[]string{"config", "show"}, "takes no arguments, or check FILE"},
		{[]string{"config", "check"}, "check takes one file"},
		{[]string{"plugin", "create", "x"}, `unknown subcommand "create" (valid: new)`},
		{[]string{"plugin", "old"}, `unknown subcommand "old" (valid: new)`},
		{[]string{"plugin", "new"}, "expected new NAME [DIR]"},
		{[]string{"plugin", "new", "wheels"}, `"wheels" is the name of a builtin step: a site plugin needs its own name (mine-wheels, site-wheels, ...)`},
		{[]string{"config", "chek"}, `unknown subcommand "chek" (did you mean "check"?)`},
		{[]string{"doctor", "--pid", "abc"}, `--pid: "abc" is not a whole number`},
		{[]string{"doctor", "--pid=-3"}, "--pid -3: not a process id"},
		{[]string{"doctor", "--root", "/nonexistent"}, "--root /nonexistent: no such directory"},
		{[]string{"driver", "--root", "/nonexistent"}, "--root /nonexistent: no such directory"},
		{[]string{"driver", "--root", "/dev/null"}, "--root /dev/null: not a directory"},
		{[]string{"driver", "--format", "nfd", "--output", "/nonexistent"}, "--output /nonexistent: no such directory"},
		{[]string{"driver", "--output", "/tmp"}, "--output is for --format nfd"},
		{[]string{"driver", "--methods", "nvidia-sm"}, `--methods: unknown method "nvidia-sm" (did you mean "nvidia-smi"?)`},
		{[]string{"find", "cudart", "--json=maybe"}, `--json: "maybe" is not true or false`},
		{[]string{"plugin", "new", "system"}, `"system" is not a step name: lower-case letters, digits, '-' and '_', starting with a letter, and not "already-loaded" or "system"`},
		{[]string{"completion"}, "takes one shell: bash, zsh or fish"},
		{[]string{"completion", "tcsh"}, `unknown shell "tcsh" (valid: bash, zsh, fish)`},
		{[]string{"version", "now"}, "takes no arguments"},
		{[]string{"config", "check", "f.toml", "--config", "g.toml"}, "check reads the one file it is given, not --config"},
		{[]string{"help", "find", "load"}, "takes one command"},
		{[]string{"help", "--pid", "1"}, "unknown flag --pid"},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		cmd := lookup(tt.args[0])
		covered[cmd.name] = true
		out, errOut, code := e.run(t, tt.args...)
		want := "pathfinder: " + cmd.name + ": " + tt.want + "\n" + cmd.usageLine() + "\nrun 'pathfinder help " + cmd.name + "' for details\n"
		if code != exitUsage || out != "" || errOut != want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n%s\nwant exit %d and\n%s", tt.args, code, out, errOut, exitUsage, want)
		}
		help, _, _ := e.run(t, "help", cmd.name)
		if first, _, _ := strings.Cut(help, "\n"); !strings.Contains(errOut, "\n"+first+"\n") {
			t.Errorf("%v: the usage line differs from the help's %q", tt.args, first)
		}
	}
	for _, c := range commands {
		if !covered[c.name] {
			t.Errorf("no usage error of %s is tested", c.name)
		}
	}
	if want := "(" + lookup("find").usageLine() + ")"; !strings.Contains(readme(t), want) {
		t.Errorf("README lacks find's usage line %s", want)
	}
}

// TestUsageErrors_everyFlag: every flag of every command keeps the one format: a flag left without
// its value, a boolean given something else, a mistyped flag name each print what is wrong, the
// command's usage line and where its help is, and exit 2.
func TestUsageErrors_everyFlag(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	flags := 0
	for _, c := range commands {
		fs, _, _ := c.flagSet(new(string))
		cases := [][2]string{{"--hepl", "unknown flag --hepl (did you mean --help?)"}}
		for _, name := range flagNames(fs) {
			f := fs.Lookup(name)
			if isBoolFlag(f) {
				cases = append(cases, [2]string{"--" + name + "=maybe", "--" + name + `: "maybe" is not true or false`})
			} else {
				cases = append(cases, [2]string{"--" + name, "flag --" + name + " needs a value"})
			}
			flags++
		}
		for _, tc := range cases {
			out, errOut, code := e.run(t, c.name, tc[0])
			want := "pathfinder: " + c.name + ": " + tc[1] + "\n" + c.usageLine() + "\nrun 'pathfinder help " + c.name + "' for details\n"
			if code != exitUsage || out != "" || errOut != want {
				t.Errorf("%s %s: exit %d, stdout %q, stderr\n%s\nwant exit %d and\n%s", c.name, tc[0], code, out, errOut, exitUsage, want)
			}
		}
	}
	if flags < 20 {
		t.Fatalf("%d flags over all commands; the table lost some", flags)
	}
}

// TestConfigErrors_ourWords: a configuration's mistakes, whether checked or used, name the file,
// line and column, in pathfinder's words, with the nearest right key; exit 2, no usage line.
func TestConfigErrors_ourWords(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	dir := t.TempDir()
	tests := []struct {
		name, toml, want string
	}{
		{"a mistyped table", "[serch]\norder = [\"wheels\"]\n", `:1:1: unknown key "serch" (did you mean "search"?)`},
		{"a mistyped key", "[search]\nordr = [\"wheels\"]\n", `:2:1: unknown key "search.ordr" (did you mean "search.order"?)`},
		{"a key set twice", "[search]\norder = [\"wheels\"]\norder = [\"conda\"]\n", `:3:1: key "search.order" is set twice (first on line 2)`},
		{"a mistyped step", "[search]\norder = [\"cnda\"]\n", `:2:1: search.order names unknown step "cnda" (did you mean "conda"?) (known: already-loaded, canary, conda, envroots, programfiles, system, wheels)`},
	}
	for _, tt := range tests {
		file := write(t, filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".toml"), []byte(tt.toml))
		for _, args := range [][]string{{"config", "check", file}, {"find", "cudart", "--config", file}} {
			out, errOut, code := e.run(t, args...)
			first, rest, _ := strings.Cut(errOut, "\n")
			if code != exitUsage || out != "" || !strings.HasPrefix(first, "pathfinder: ") || !strings.Contains(first, file+":") ||
				!strings.HasSuffix(first, tt.want) || strings.Contains(rest, "usage:") {
				t.Errorf("%s: %v: exit %d, stdout %q, stderr %q; want one line ending %q", tt.name, args, code, out, errOut, tt.want)
			}
		}
	}
	for _, want := range []string{"a key set twice", `[serch]: did you mean "search"?`, `order = ["cnda"]: did you mean "conda"?`} {
		if !strings.Contains(readme(t), want) {
			t.Errorf("README lacks %s", want)
		}
	}
}

// TestDidYouMean: a mistyped command, a command named to help, a flag and a flag's value get the
// nearest right one; something far from all of them gets none.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	tests := []struct {
		args   []string
		stderr string // the first line
	}{
		{[]string{"fnd", "cudart"}, `pathfinder: unknown command "fnd" (did you mean "find"?)`},
		{[]string{"lsit"}, `pathfinder: unknown command "lsit" (did you mean "list"?)`},
		{[]string{"plugn"}, `pathfinder: unknown command "plugn" (did you mean "plugin"?)`},
		{[]string{"pluginss"}, `pathfinder: unknown command "pluginss" (did you mean "plugins"?)`},
		{[]string{"expl", "cudart"}, `pathfinder: unknown command "expl" (did you mean "explain"?)`},
		{[]string{"verison"}, `pathfinder: unknown command "verison" (did you mean "version"?)`},
		{[]string{"resolve", "cudart"}, `pathfinder: unknown command "resolve"`},
		{[]string{"x"}, `pathfinder: unknown command "x"`},
		{[]string{"help", "drvier"}, `pathfinder: help: unknown command "drvier" (did you mean "driver"?)`},
		{[]string{"find", "cudart", "--tagret", "linux/arm64"}, `pathfinder: find: unknown flag --tagret (did you mean --target?)`},
		{[]string{"find", "cudart", "-kidn", "binary"}, `pathfinder: find: unknown flag -kidn (did you mean --kind?)`},
		{[]string{"find", "cudart", "--kind", "dynamic-libs"}, `pathfinder: find: --kind: unknown kind "dynamic-libs" (did you mean "dynamic-lib"?)`},
		{[]string{"find", "cudart", "--target", "linux/arm"}, `pathfinder: find: --target: unknown target "linux/arm" (did you mean "linux/arm64"?)`},
		{[]string{"driver", "--format", "jsn"}, `pathfinder: driver: --format: unknown format "jsn" (did you mean "json"?)`},
		{[]string{"driver", "--methods", "sysfs,procf"}, `pathfinder: driver: --methods: unknown method "procf" (did you mean "procfs"?)`},
		{[]string{"completion", "fihs"}, `pathfinder: completion: unknown shell "fihs" (did you mean "fish"?)`},
		{[]string{"completion", "fsh"}, `pathfinder: completion: unknown shell "fsh" (did you mean "zsh" or "fish"?)`},
	}
	for _, tt := range tests {
		_, errOut, code := e.run(t, tt.args...)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != exitUsage || first != tt.stderr {
			t.Errorf("%v: exit %d, %q; want %d, %q", tt.args, code, first, exitUsage, tt.stderr)
		}
	}
	if want := `pathfinder fnd: unknown command "fnd" (did you mean "find"?)`; !strings.Contains(readme(t), want) {
		t.Errorf("README lacks %s", want)
	}
	// An unknown command ends with pathfinder's own usage line.
	_, errOut, _ := e.run(t, "fnd")
	if want := "\n" + globalUsage + "\nrun 'pathfinder help' for every command\n"; !strings.HasSuffix(errOut, want) {
		t.Errorf("fnd: %q lacks %q", errOut, want)
	}
}

// TestConfigFlag_everyCommand: --config FILE with a file that is not there is a usage or
// configuration error (exit 2) on every command: one that reads the configuration says the file is
// missing, as find does; one that does not refuses the flag as one it does not take. Before, driver,
// version, completion, help and plugin new ignored it.
func TestConfigFlag_everyCommand(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	missing := filepath.Join(t.TempDir(), "missing.toml")
	args := map[string][]string{"find": {"cudart"}, "load": {"cudart"}, "explain": {"cudart"}, "plugin": {"new", "mine", filepath.Join(t.TempDir(), "mine")},
		"completion": {"bash"}, "help": {"find"}, "config": {}}
	for _, cmd := range commands {
		line := append(append([]string{cmd.name}, args[cmd.name]...), "--config", missing)
		out, errOut, code := e.run(t, line...)
		want := "pathfinder: " + cmd.name + ": unknown flag --config"
		if cmd.readsConfig {
			want = missing
		}
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", line, code, out, errOut, want)
		}
	}
	if _, err := os.Stat(args["plugin"][2]); err == nil {
		t.Error("plugin new ran with a --config it does not take")
	}
	if r := readme(t); !strings.Contains(r, "every command takes --help, and those that read the configuration (find, load, explain, list, doctor, packs, plugins, config) take --config FILE, others refuse it") {
		t.Error("README does not say which commands take --config")
	}
}

// TestNewcomerLines: what a newcomer types wrong, or asks, gets an answer that helps.
func TestNewcomerLines(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	for _, tt := range []struct {
		args         []string
		code         int
		stdout, line string // stdout's first line; stderr's first line
	}{
		{args: []string{"find", ""}, code: exitUsage, line: "pathfinder: find: an empty name; 'pathfinder list' lists the names"},
		{args: []string{"explain", ""}, code: exitUsage, line: "pathfinder: explain: an empty name; 'pathfinder list' lists the names"},
		{args: []string{"find", "cccl"}, code: exitNotFound, line: `pathfinder: unknown library "cccl": "cccl" is a header set: pathfinder find cccl --kind header-dir`},
		{args: []string{"version", "--help"}, code: exitOK, stdout: "usage: pathfinder version [FLAGS]"},
		{args: []string{"--config", "f", "find", "cudart"}, code: exitUsage, line: "pathfinder: --config: flags follow the command, as in 'pathfinder find cudart --config f'"},
	} {
		out, errOut, code := e.run(t, tt.args...)
		first, _, _ := strings.Cut(out, "\n")
		line, _, _ := strings.Cut(errOut, "\n")
		if code != tt.code || first != tt.stdout || line != tt.line {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", tt.args, code, first, line, tt.code, tt.stdout, tt.line)
		}
	}
}
