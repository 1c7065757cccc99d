package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
)

var shells = []string{"bash", "zsh", "fish"}

func cmdCompletion(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	return func(_ context.Context, c *cli, args []string) int {
		if len(args) != 1 {
			return c.usageError("takes one shell: bash, zsh or fish")
		}
		script, ok := map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}[args[0]]
		if !ok {
			return c.usageError("unknown shell %q%s", args[0], didYouMeanOrValid(args[0], shells))
		}
		io.WriteString(c.stdout, script)
		return exitOK
	}
}

// completeCommand is the hidden command the completion scripts call: `pathfinder __complete WORD...`
// with the words typed after "pathfinder", the last one the word being completed (maybe empty). So
// every shell completes alike, from the command table, and library names come from the catalog
// (packs added later complete too).
const completeCommand = "__complete"

// Answers that tell the shell to complete a path itself.
const (
	completeFile = ":file"
	completeDir  = ":dir"
)

// complete prints the candidates for the last word, one per line, each starting with it; or
// completeFile or completeDir alone. It never fails: what it cannot complete gets no candidate.
func (c *cli) complete(words []string) int {
	if len(words) == 0 {
		words = []string{""}
	}
	for _, w := range c.completions(words[:len(words)-1], words[len(words)-1]) {
		fmt.Fprintln(c.stdout, w)
	}
	return exitOK
}

func (c *cli) completions(before []string, cur string) []string {
	if len(before) == 0 {
		return withPrefix(cur, commandNames())
	}
	cmd := lookup(before[0])
	if cmd == nil {
		return nil
	}
	fs, _, _ := cmd.flagSet(new(string))
	given := map[string]string{} // flag name -> value
	var args []string
	endFlags := false
	for i := 1; i < len(before); i++ {
		w := before[i]
		if endFlags || len(w) < 2 || w[0] != '-' {
			args = append(args, w)
			continue
		}
		if w == "--" {
			endFlags = true
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if !hasValue && !isBoolFlag(f) {
			if i+1 == len(before) {
				return flagValues(name, "", cur) // cur is this flag's value
			}
			i++
			value = before[i]
		}
		given[name] = value
	}
	if !endFlags && strings.HasPrefix(cur, "-") {
		if name, value, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
				return flagValues(name, cur[:len(cur)-len(value)], value)
			}
			return nil
		}
		var out []string
		_, helpSet := given["h"]
		for _, n := range flagNames(fs) {
			if _, set := given[n]; !set && !(n == "help" && helpSet) {
				out = append(out, "--"+n)
			}
		}
		return withPrefix(cur, out)
	}
	return c.positional(cmd, args, cur, given)
}

// flagValues completes the value of flag name: prefix is what comes before the value in the word
// ("--kind=" or "").
func flagValues(name, prefix, cur string) []string {
	var values []string
	switch name {
	case "config":
		return []string{completeFile}
	case "root", "output", "pathfinder":
		return []string{completeDir}
	case "kind":
		for _, k := range engine.Kinds() {
			values = append(values, string(k))
		}
	case "target":
		values = targets
	case "format":
		values = formats
	case "methods": // a comma-separated list: complete after the last comma, each method once
		done, last := "", cur
		if i := strings.LastIndex(cur, ","); i >= 0 {
			done, last = cur[:i+1], cur[i+1:]
		}
		for _, m := range driver.MethodNames() {
			if strings.HasPrefix(m, last) && !slices.Contains(strings.Split(done, ","), m) {
				values = append(values, prefix+done+m)
			}
		}
		return values
	}
	var out []string // values is targets or formats: never written to
	for _, v := range values {
		out = append(out, prefix+v)
	}
	return withPrefix(prefix+cur, out)
}

// positional completes an argument of cmd, given the arguments before it and the flags set.
func (c *cli) positional(cmd *command, args []string, cur string, given map[string]string) []string {
	switch cmd.name {
	case "find", "load", "explain":
		if cmd.name == "explain" && len(args) > 0 {
			return nil // explain takes one name
		}
		kind := engine.DynamicLib // load has no --kind
		if k, ok := given["kind"]; ok {
			kind = engine.Kind(k)
		}
		var out []string
		for _, n := range c.libraryNames(kind, given) {
			if !slices.Contains(args, n) {
				out = append(out, n)
			}
		}
		return withPrefix(cur, out)
	case "help":
		if len(args) == 0 {
			return withPrefix(cur, commandNames())
		}
	case "completion":
		if len(args) == 0 {
			return withPrefix(cur, shells)
		}
	case "config":
		switch {
		case len(args) == 0:
			return withPrefix(cur, []string{"check"})
		case len(args) == 1 && args[0] == "check":
			return []string{completeFile}
		}
	case "plugin":
		switch {
		case len(args) == 0:
			return withPrefix(cur, []string{"new"})
		case len(args) == 2 && args[0] == "new":
			return []string{completeDir}
		}
	}
	return nil
}

// libraryNames are the names of kind that the platform of --target (or this one) has, from the
// catalog that the --config given on the line reads.
func (c *cli) libraryNames(kind engine.Kind, given map[string]string) []string {
	if _, err := engine.ParseKind(string(kind)); err != nil {
		return nil
	}
	c.configFile, c.target = given["config"], given["target"]
	f, err := c.open()
	if err != nil {
		return nil
	}
	var names []string
	for _, l := range f.Libraries(kind) {
		if l.Available {
			names = append(names, l.Name)
		}
	}
	return names
}

func withPrefix(prefix string, words []string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}

// The scripts hand the words to `pathfinder __complete` and complete a path themselves when told to.
// bash splits "--kind=bin" into three words and replaces only the last: the line is split again on
// blanks, and what the candidates have before bash's word is taken off.
const bashCompletion = `# pathfinder completion for bash; load with: source <(pathfinder completion bash)
_pathfinder() {
    local line=${COMP_LINE:0:COMP_POINT} cur=${COMP_WORDS[COMP_CWORD]}
    local -a words
    read -ra words <<< "$line"
    [[ $line =~ [[:space:]]$ ]] && words+=("")
    [[ $cur == "=" ]] && cur=    # readline completes the empty word after "="
    local word=${words[${#words[@]}-1]}
    local strip=${word%"$cur"} out
    out=$("${words[0]}" __complete "${words[@]:1}" 2>/dev/null)
    COMPREPLY=()
    case $out in
        :file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        :dir) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
        ?*) while IFS= read -r word; do COMPREPLY+=("${word#"$strip"}"); done <<< "$out" ;;
    esac
}
complete -F _pathfinder pathfinder
`

const zshCompletion = `#compdef pathfinder
# pathfinder completion for zsh; load with: source <(pathfinder completion zsh) (after compinit)
_pathfinder() {
    local -a out
    out=(${(f)"$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null)"})
    case $out[1] in
        :file) compset -P '*='; _files ;;
        :dir) compset -P '*='; _files -/ ;;
        *) compadd -- $out ;;
    esac
}
compdef _pathfinder pathfinder
`

const fishCompletion = `# pathfinder completion for fish; load with: pathfinder completion fish | source
function __pathfinder_complete
    set -l words (commandline -opc)
    set -l cmd $words[1]
    set -e words[1]
    set -l cur (commandline -ct)
    set -l out ($cmd __complete $words "$cur" 2>/dev/null)
    set -l pre (string match -r -- '^-[^=]*=' "$cur")
    set -l path (string replace -r -- '^-[^=]*=' '' "$cur")
    switch "$out[1]"
        case :file
            __fish_complete_path "$path" | string replace -r -- '^' "$pre"
        case :dir
            __fish_complete_directories "$path" | string replace -r -- '^' "$pre"
        case '*'
            printf '%s\n' $out
    end
end
complete -c pathfinder -f -a '(__pathfinder_complete)'
`
