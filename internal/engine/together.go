package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/search"
)

// ErrMixedToolkits is returned when no one root holds every library of a set.
var ErrMixedToolkits = errors.New("no one root holds every library")

// MixedToolkitsError says, for each root that holds some of a set, which libraries it lacks, or,
// for one that holds them all, of which CUDA majors.
type MixedToolkitsError struct {
	Names   []string
	Missing map[string][]string // root -> the names it lacks
	// Mixed: root -> the CUDA of each library, for a root that holds every name but of no one major
	Mixed map[string]string
}

func (e *MixedToolkitsError) Error() string {
	why := map[string]string{}
	for r, names := range e.Missing {
		why[r] = "lacks " + quoteAll(names)
	}
	for r, mixed := range e.Mixed {
		why[r] = "holds them of more than one CUDA major: " + mixed
	}
	roots := make([]string, 0, len(why))
	for r := range why {
		roots = append(roots, r)
	}
	sort.Strings(roots)
	parts := make([]string, len(roots))
	for i, r := range roots {
		parts[i] = r + " " + why[r]
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
// root, in the first library's order of preference, that holds them all of one CUDA major (an
// undated one goes with any). Nothing is loaded.
func (f *Engine) FindTogether(ctx context.Context, names []string) ([]*search.Library, error) {
	cands := make([][]rootedLibrary, len(names))
	var order []string // candidate roots, most preferred first
	seen := map[string]bool{}
	if !f.enter() {
		return nil, f.closedError(DynamicLib, strings.Join(names, ", "))
	}
	defer f.leave()
	for i, name := range names {
		f.searches.Add(1)
		ex, valid, _ := f.searchAll(ctx, DynamicLib, name, findEvery, f.checkFor(DynamicLib, name, true))
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
	mixed := &MixedToolkitsError{Names: names, Missing: map[string][]string{}, Mixed: map[string]string{}}
	for _, root := range order {
		in := make([][]rootedLibrary, len(names)) // each name's candidates in root, in order
		for i, name := range names {
			in[i] = slices.DeleteFunc(slices.Clone(cands[i]), func(v rootedLibrary) bool { return v.root != root })
			if len(in[i]) == 0 {
				mixed.Missing[root] = append(mixed.Missing[root], name)
			}
		}
		if len(mixed.Missing[root]) > 0 {
			continue
		}
		if libs := oneMajor(names, in); libs != nil {
			return libs, nil
		}
		var each []string
		for i, name := range names {
			each = append(each, name+" "+cudaOrUndated(in[i][0].lib.CUDA))
		}
		mixed.Mixed[root] = strings.Join(each, ", ")
	}
	return nil, mixed
}

// oneMajor picks for each name one of its candidates (each name's in one root) so that every dated
// pick is of one CUDA major, trying the majors in the order the candidates name them; nil for none.
func oneMajor(names []string, in [][]rootedLibrary) []*search.Library {
	var majors []string // "" for the undated
	for _, c := range slices.Concat(in...) {
		if m, _, _ := strings.Cut(c.lib.CUDA, "."); !slices.Contains(majors, m) {
			majors = append(majors, m)
		}
	}
	for _, major := range majors {
		libs := make([]*search.Library, 0, len(names))
		for i, name := range names {
			j := slices.IndexFunc(in[i], func(v rootedLibrary) bool { m, _, _ := strings.Cut(v.lib.CUDA, "."); return m == major || m == "" })
			if j < 0 {
				break
			}
			lib := in[i][j].lib
			lib.Name, lib.Kind = name, search.DynamicLib
			libs = append(libs, &lib)
		}
		if len(libs) == len(names) {
			return libs
		}
	}
	return nil
}

// cudaOrUndated names the CUDA a library belongs to in a message.
func cudaOrUndated(cuda string) string {
	if cuda == "" {
		return "undated"
	}
	return "CUDA " + cuda
}
