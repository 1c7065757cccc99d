package loadermodel

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
)

// SearchDirs is the own search path of the object at file that needs n, as the loader uses it:
// DT_RPATH (before LD_LIBRARY_PATH) only when there is no DT_RUNPATH (after it), $ORIGIN expanded to
// the object's directory. $LIB and $PLATFORM stay, and ResolveNeeded refuses to guess them.
func SearchDirs(file string, n binfmt.Needs) (rpath, runpath []string) {
	origin := path.Dir(file)
	expand := func(dirs []string) []string {
		var out []string
		for _, d := range dirs {
			d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
			if d != "" {
				out = append(out, d)
			}
		}
		return out
	}
	if len(n.RunPath) > 0 {
		return nil, expand(n.RunPath)
	}
	return expand(n.RPath), nil
}

// LoadProblem predicts what would make dlopen of the object at file fail after it is opened: a
// DT_NEEDED library the loader would not find, or one that lacks a symbol version the object
// needs (a library built against a newer glibc). provided reports the names that will already be
// loaded (the loader matches those by soname, with no search). seen, when not nil, gets every
// search made. "" means nothing this model knows of would fail; a search the model cannot predict
// ($LIB in a DT_RUNPATH) is no problem, not a guess.
func (l *Loader) LoadProblem(file string, n binfmt.Needs, provided func(soname string) bool, seen func(Resolution, error)) string {
	rpath, runpath := SearchDirs(file, n)
	for _, name := range n.Needed {
		if provided != nil && provided(name) {
			continue
		}
		res, err := l.ResolveNeeded(name, rpath, runpath)
		if seen != nil {
			seen(res, err)
		}
		var re *ResolveError
		switch {
		case errors.Is(err, ErrNotFound):
			return fmt.Sprintf("it needs %s, which the loader would not find (%s)", name, searched(rpath, runpath))
		case errors.Is(err, ErrBadLibrary) && errors.As(err, &re):
			return fmt.Sprintf("it needs %s, and the loader would stop at %s: %s", name, re.Path, re.Reason)
		case err != nil:
			continue
		}
		if missing, have := l.missingVersions(res.Path, n.Versions[name]); missing != "" {
			msg := fmt.Sprintf("%s: version %s not found (required by %s)", res.Path, missing, path.Base(file))
			if have != "" {
				msg += "; this system has up to " + have
			}
			return msg
		}
	}
	return ""
}

func searched(rpath, runpath []string) string {
	var places []string
	if len(rpath) > 0 {
		places = append(places, "DT_RPATH "+strings.Join(rpath, ":"))
	}
	places = append(places, "LD_LIBRARY_PATH")
	if len(runpath) > 0 {
		places = append(places, "DT_RUNPATH "+strings.Join(runpath, ":"))
	}
	return "searched " + strings.Join(places, ", ") + ", ld.so.cache and the default directories"
}

// missingVersions is the first of want that the library at p does not define, and the newest
// version it defines in that family ("GLIBC_2.36" for a missing "GLIBC_2.38"). A library without
// version definitions satisfies everything: the loader only warns about it.
func (l *Loader) missingVersions(p string, want []string) (missing, have string) {
	if len(want) == 0 {
		return "", ""
	}
	file, err := newRootFS(l.Root).open(p)
	if err != nil {
		return "", ""
	}
	defer file.Close()
	ef, err := binfmt.NewELF(file)
	if err != nil {
		return "", ""
	}
	defs := ef.DefinedVersions()
	if len(defs) == 0 {
		return "", ""
	}
	for _, w := range want {
		if slices.Contains(defs, w) {
			continue
		}
		family, _, _ := strings.Cut(w, "_")
		for _, d := range defs {
			if f, _, ok := strings.Cut(d, "_"); ok && f == family && (have == "" || olderVersion(have, d)) {
				have = d
			}
		}
		return w, have
	}
	return "", ""
}

// olderVersion orders symbol versions of one family by number: GLIBC_2.9 before GLIBC_2.36.
func olderVersion(a, b string) bool {
	_, av, _ := strings.Cut(a, "_")
	_, bv, _ := strings.Cut(b, "_")
	return tables.CompareVersions(av, bv) < 0
}
