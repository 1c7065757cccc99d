package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ErrMixedToolkits is returned when no one root holds every library of a set.
var ErrMixedToolkits = errors.New("no one root holds every library")

// MixedToolkitsError says, for each root that holds some of a set, which libraries it lacks.
type MixedToolkitsError struct {
	Names   []string
	Missing map[string][]string // root -> the names it lacks
}

func (e *MixedToolkitsError) Error() string {
	roots := make([]string, 0, len(e.Missing))
	for r := range e.Missing {
		roots = append(roots, r)
	}
	sort.Strings(roots)
	var parts []string
	for _, r := range roots {
		parts = append(parts, fmt.Sprintf("%s lacks %s", r, quoteAll(e.Missing[r])))
	}
	return fmt.Sprintf("no one root holds all of %s: %s", quoteAll(e.Names), strings.Join(parts, "; "))
}

func (e *MixedToolkitsError) Unwrap() error { return ErrMixedToolkits }

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// FindTogether finds every named dynamic library so that all come from one root — one site-packages
// directory, conda prefix, install root or toolkit — which a name-by-name search does not promise.
// It runs every step for each name, keeps every valid candidate with its root, and takes the first
// root, in the first library's order of preference, that holds them all. Nothing is loaded.
func (f *Finder) FindTogether(ctx context.Context, names []string) ([]*Library, error) {
	cands := make([][]rootedLibrary, len(names))
	var order []string // candidate roots, most preferred first
	seen := map[string]bool{}
	if !f.enter() {
		return nil, f.closedError(DynamicLib, strings.Join(names, ", "))
	}
	defer f.leave()
	for i, name := range names {
		f.hooks.searches.Add(1)
		ex, valid, _ := f.searchAll(ctx, DynamicLib, name, findEvery)
		if f.closed.Load() {
			return nil, f.closedError(DynamicLib, name)
		}
		if ex.Err != nil && len(valid) == 0 {
			return nil, ex.Err
		}
		if len(valid) == 0 {
			e, _ := f.catalog.Lookup(DynamicLib, name)
			return nil, &SearchError{Name: name, Kind: DynamicLib, Err: ErrNotFound, Platform: f.platform,
				Looked: e.FileNames(f.platform), Attempts: ex.Attempts()}
		}
		cands[i] = valid
		for _, v := range valid {
			if !seen[v.root] {
				seen[v.root] = true
				order = append(order, v.root)
			}
		}
	}
	missing := map[string][]string{}
	for _, root := range order {
		libs := make([]*Library, 0, len(names))
		for i, name := range names {
			j := slices.IndexFunc(cands[i], func(v rootedLibrary) bool { return v.root == root })
			if j < 0 {
				missing[root] = append(missing[root], name)
				continue
			}
			lib := cands[i][j].lib
			lib.Name, lib.Kind = name, DynamicLib
			libs = append(libs, &lib)
		}
		if len(missing[root]) == 0 {
			return libs, nil
		}
	}
	return nil, &MixedToolkitsError{Names: names, Missing: missing}
}
