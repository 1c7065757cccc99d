package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
)

func cmdCompletion(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	return func(_ context.Context, c *cli, args []string) int {
		if len(args) != 1 {
			c.errorf("completion takes one shell: bash, zsh or fish")
			return exitUsage
		}
		var names []string
		for _, cmd := range commands {
			names = append(names, cmd.name)
		}
		cmds := strings.Join(names, " ")
		switch args[0] {
		case "bash":
			fmt.Fprintf(c.stdout, bashCompletion, cmds)
		case "zsh":
			fmt.Fprintf(c.stdout, "autoload -U +X bashcompinit && bashcompinit\n"+bashCompletion, cmds)
		case "fish":
			fmt.Fprintf(c.stdout, fishCompletion, cmds)
		default:
			c.errorf("completion: unknown shell %q (bash, zsh or fish)", args[0])
			return exitUsage
		}
		return exitOK
	}
}

// Library names come from `pathfinder list --names`, so packs added later complete too.
const bashCompletion = `# pathfinder completion for bash; load with: source <(pathfinder completion bash)
_pathfinder() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "%s" -- "$cur"))
        return
    fi
    case "$cur" in
        -*) COMPREPLY=($(compgen -W "--json --config --help" -- "$cur")) ;;
        *) case "${COMP_WORDS[1]}" in
               find|load|explain) COMPREPLY=($(compgen -W "$(pathfinder list --names 2>/dev/null)" -- "$cur")) ;;
               completion) COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")) ;;
           esac ;;
    esac
}
complete -F _pathfinder pathfinder
`

const fishCompletion = `# pathfinder completion for fish; load with: pathfinder completion fish | source
complete -c pathfinder -f -n __fish_use_subcommand -a "%s"
complete -c pathfinder -f -n "__fish_seen_subcommand_from find load explain" -a "(pathfinder list --names 2>/dev/null)"
complete -c pathfinder -f -n "__fish_seen_subcommand_from completion" -a "bash zsh fish"
complete -c pathfinder -l json -d "JSON output"
complete -c pathfinder -l config -r -d "config file read last"
`
