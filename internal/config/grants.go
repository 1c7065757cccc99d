package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/internal/suggest"
)

// GrantKind is what an entry of a plugin's read list names.
type GrantKind int

const (
	GrantDir          GrantKind = iota // a directory the config names
	GrantVar                           // "$NAME": the directory the variable names
	GrantSitePackages                  // "@site-packages": the site-packages directories discovery finds
	GrantInstallRoots                  // "@install-root-env-vars": what the library's install-root variables name
	GrantCanaryRoots                   // "@canary-roots": the toolkit roots where the loader finds its canaries
)

// The grant tokens, as the config writes them.
var grantTokens = map[string]GrantKind{
	"@site-packages":         GrantSitePackages,
	"@install-root-env-vars": GrantInstallRoots,
	"@canary-roots":          GrantCanaryRoots,
}

// InstallRootVars is the token that, in an env list, grants the library's install-root variables.
const InstallRootVars = "@install-root-env-vars"

// Grant is one entry of a plugin's read list.
type Grant struct {
	Kind GrantKind
	Name string // the directory, for GrantDir; the variable, for GrantVar
}

// String is the grant as the config writes it.
func (g Grant) String() string {
	switch g.Kind {
	case GrantDir:
		return g.Name
	case GrantVar:
		return "$" + g.Name
	}
	for tok, k := range grantTokens {
		if k == g.Kind {
			return tok
		}
	}
	return fmt.Sprintf("GrantKind(%d)", g.Kind)
}

// parseGrants reads a read list: a token ("@site-packages"), a variable ("$CUDA_HOME") or a
// directory. An unknown token is an error, with the known ones it is close to.
func parseGrants(list []string) ([]Grant, error) {
	out := make([]Grant, 0, len(list))
	for _, r := range list {
		switch {
		case strings.HasPrefix(r, "@"):
			k, ok := grantTokens[r]
			if !ok {
				return nil, unknownToken(r, "@site-packages", "@install-root-env-vars", "@canary-roots")
			}
			out = append(out, Grant{Kind: k})
		case strings.HasPrefix(r, "$"):
			out = append(out, Grant{Kind: GrantVar, Name: r[1:]})
		default:
			out = append(out, Grant{Kind: GrantDir, Name: r})
		}
	}
	return out, nil
}

// checkEnvGrants refuses a token other than @install-root-env-vars in an env list: every other
// entry is a variable's name.
func checkEnvGrants(list []string) error {
	for _, v := range list {
		if strings.HasPrefix(v, "@") && v != InstallRootVars {
			return unknownToken(v, InstallRootVars)
		}
	}
	return nil
}

func unknownToken(tok string, known ...string) error {
	return fmt.Errorf("unknown grant %q%s (known: %s)", tok, suggest.Phrase(suggest.Closest(tok, known)), strings.Join(known, ", "))
}

// EnvVars is the variables p may read when searching for e: its env list, with
// @install-root-env-vars standing for e's install-root variables.
func (p *Plugin) EnvVars(e *catalog.Entry) []string {
	var out []string
	for _, s := range p.Env {
		if s == InstallRootVars {
			out = append(out, e.InstallRootEnvVars...)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// FoundViaFor is the found_via of what lies in a directory p was granted by g; variable is the
// variable that named it, for GrantVar and GrantInstallRoots. A found_via the config gives p wins;
// otherwise it is cuda.pathfinder's label for site-packages and a canary's toolkit root, the
// variable's name for a directory a variable names, and p's name for one the config names.
func (p *Plugin) FoundViaFor(g Grant, variable string) string {
	switch {
	case p.FoundVia != "":
		return p.FoundVia
	case g.Kind == GrantSitePackages:
		return "site-packages"
	case g.Kind == GrantCanaryRoots:
		return "system-ctk-root"
	case g.Kind == GrantVar || g.Kind == GrantInstallRoots:
		return variable
	}
	return p.Name
}

// checkFoundVia refuses a found_via that is blank, unprintable, or one of the host steps' labels:
// those say the host's own step found the library. "" gives the grants' labels back (a layer over
// one that set it).
func checkFoundVia(label string) error {
	switch {
	case label == "":
		return nil
	case label == FoundViaAlreadyLoaded || label == FoundViaSystem:
		return fmt.Errorf("%q is the label of the host's own step, never a plugin's", label)
	case strings.TrimSpace(label) == "" || strings.ContainsFunc(label, func(r rune) bool { return !unicode.IsPrint(r) }):
		return fmt.Errorf("%q is not a label: want printable text, such as \"conda\"", label)
	}
	return nil
}

// envGranted reports whether p may read variable v for some library: granted by name, or through
// @install-root-env-vars when a library of the catalog declares it.
func (p *Plugin) envGranted(v string, cat *catalog.Catalog) bool {
	if slices.Contains(p.Env, v) {
		return true
	}
	if !slices.Contains(p.Env, InstallRootVars) || cat == nil {
		return false
	}
	for _, k := range catalog.Kinds {
		for _, n := range cat.Names(k.Kind) {
			if e, ok := cat.Lookup(k.Kind, n); ok && slices.Contains(e.InstallRootEnvVars, v) {
				return true
			}
		}
	}
	return false
}

// checkGrants refuses a read grant that names the whole file system or the kernel's files
// (OverBroad): the plugin would read every secret the process can, and no library is there. A
// grant through a variable or a token is judged when it is resolved, for each search.
func (c *Config) checkGrants(p *Plugin) error {
	for _, g := range p.Read {
		if g.Kind != GrantDir {
			continue
		}
		if err := OverBroad(guestpath.Host, g.Name); err != nil {
			return c.ErrorAt("plugin."+p.Name+".read", fmt.Errorf("plugin.%s.read: %q: %w", p.Name, g.Name, err))
		}
	}
	return nil
}

// OverBroad refuses a directory (host form) no plugin may be granted: the whole file system, a whole
// Windows volume, or the kernel's and devices' files (/proc, /sys, /dev: the process's environment
// and memory are there). A symlink to one of them is judged by where it leads.
func OverBroad(paths guestpath.Map, dir string) error {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if g, err := paths.ToGuest(dir); err == nil && (g == "/" || guestpath.IsVolumeRoot(g)) {
		return errors.New("the whole file system is never granted: grant the directories the plugin searches")
	}
	if !paths.Windows() {
		for _, sys := range []string{"/proc", "/sys", "/dev"} {
			if dir == sys || strings.HasPrefix(dir, sys+"/") {
				return errors.New(sys + " is never granted: it holds the process's and the kernel's state, not libraries")
			}
		}
	}
	return nil
}
