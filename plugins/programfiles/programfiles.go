// Package programfiles is the search step for products installed under Windows' Program Files
// directory, such as cuDNN 9 (C:\Program Files\NVIDIA\CUDNN\v9.10\bin\12.9\x64\cudnn64_9.dll): the
// descriptor's program_files_dirs_windows globs under %ProgramW6432%, else %ProgramFiles%, newest
// version first.
//
// # Globs
//
// Each entry is a glob of directories relative to the Program Files directory, with "/" between
// segments and path.Match's wildcards in any segment; "{triple}" stands for the target's directory
// name ("x64", "arm64"). On a Windows target names match case-insensitively. A segment with a
// wildcard matches directories only, ordered newest first (see below); a plain segment names one
// directory. Consecutive entries that begin with the same segment are walked together, so every
// layout under one version is tried before the next older version:
//
//	NVIDIA/CUDNN/v9.*/bin/*/{triple}
//	NVIDIA/CUDNN/v9.*/bin/*
//	NVIDIA/CUDNN/v9.*/bin
//
// searches v9.10/bin/12.9/x64, v9.10/bin/12.9, v9.10/bin/12.8/x64, v9.10/bin/12.8, v9.10/bin, and
// only then v9.9/... Each directory is searched once, even when two entries reach it. An entry that
// is not a clean relative glob (absolute, "..", a backslash, a malformed pattern) is refused and
// recorded, never walked.
//
// # Newest first
//
// Names a wildcard matched are compared case-insensitively from the left, a run of digits as one
// number (by value, however long). At the first difference a larger number comes first; a number
// comes before anything else; then a dot that starts a further number (v9.10.1 before v9.10); then
// the end of the name (v9.10 before v9.10-rc1 or v9.10b, as a release before its pre-releases); then
// other text, alphabetically. Names equal but for case or leading zeros keep a fixed order. So:
//
//	v10, v9.10, v9.9, v9.9-rc1, v9.x-rc, vfoo
//
// A target's architecture is a directory in the globs ({triple}); a layout without one (cuDNN's
// older bin/12.8) is searched for every target, and the host refuses a DLL built for another
// machine before anything uses it.
package programfiles

import (
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// Plugin registers the step.
var Plugin = abi.Plugin{Name: "programfiles", Version: "1", Env: []string{"ProgramW6432", "ProgramFiles"}, Search: Search}

// Search walks the descriptor's Program Files globs under $ProgramW6432, or $ProgramFiles when that
// is unset (in a 32-bit process it names "Program Files (x86)"), and searches every directory found,
// in order, for the declared file names.
func Search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	globs := req.Library.ProgramFilesDirs(req.Platform)
	if len(globs) == 0 {
		if env.Logf != nil {
			env.Logf("no Program Files directories to search for %q on %s", req.Library.Name, req.Platform)
		}
		return resp
	}
	name := "ProgramW6432"
	if env.Lookupenv(name) == "" {
		resp.Tried = append(resp.Tried, abi.Attempt{Path: "$" + name, Reason: "not set"})
		name = "ProgramFiles"
	}
	root, ok := env.EnvDir(resp, name)
	if !ok {
		return resp
	}
	w := walker{env: env, resp: resp, fold: req.Platform.OS == "windows", seen: map[string]bool{}}
	var entries [][]string
	for _, g := range globs {
		if segs, ok := w.parse(g); ok {
			entries = append(entries, segs)
		}
	}
	w.walk(root, entries)
	abi.Find(env, req, resp, w.dirs)
	return resp
}

type walker struct {
	env  abi.Env
	resp *abi.Response
	fold bool // match names case-insensitively (a Windows target)
	seen map[string]bool
	dirs []string
}

// parse splits a glob into segments, or records why it is refused.
func (w *walker) parse(g string) ([]string, bool) {
	why := ""
	switch {
	case g == "" || g == ".":
		why = "empty"
	case strings.Contains(g, `\`):
		why = `has a backslash: separate directories with "/"`
	case path.IsAbs(g):
		why = "an absolute path: globs are relative to the Program Files directory"
	case path.Clean(g) != g || slices.Contains(strings.Split(g, "/"), ".."):
		why = "not a clean relative path (no \"..\", \".\" or \"//\")"
	default:
		if _, err := path.Match(g, ""); err != nil {
			why = "a malformed pattern"
		}
	}
	if why != "" {
		w.resp.Tried = append(w.resp.Tried, abi.Attempt{Path: g, Reason: "program_files_dirs_windows entry refused: " + why})
		return nil, false
	}
	return strings.Split(g, "/"), true
}

// walk expands entries (segment lists, in priority order; an empty one is base itself) under base,
// appending the directories found to w.dirs. Consecutive entries with the same first segment share
// its expansion, so a newer match is searched with all of its layouts before an older one.
func (w *walker) walk(base string, entries [][]string) {
	for i := 0; i < len(entries); {
		if len(entries[i]) == 0 {
			if !w.seen[base] {
				w.seen[base] = true
				w.dirs = append(w.dirs, base)
			}
			i++
			continue
		}
		seg := entries[i][0]
		j := i + 1
		for j < len(entries) && len(entries[j]) > 0 && entries[j][0] == seg {
			j++
		}
		tails := make([][]string, 0, j-i)
		for _, e := range entries[i:j] {
			tails = append(tails, e[1:])
		}
		i = j
		if !hasMeta(seg) {
			if dir, ok := w.child(base, seg); ok {
				w.walk(dir, tails)
			}
			continue
		}
		for _, m := range w.match(base, seg) {
			w.walk(path.Join(base, m), tails)
		}
	}
}

// child returns the directory base/name, folding case on a Windows target, or records that it is
// missing.
func (w *walker) child(base, name string) (string, bool) {
	p := path.Join(base, name)
	if w.env.IsDir(p) {
		return p, true
	}
	if w.fold {
		listing, _ := w.env.ReadDir(base)
		for _, e := range listing {
			if strings.EqualFold(e.Name(), name) && w.isDir(base, e) {
				return path.Join(base, e.Name()), true
			}
		}
	}
	w.resp.Tried = append(w.resp.Tried, abi.Attempt{Path: p, Reason: "no such directory"})
	return "", false
}

// match returns the directories in base whose names match pattern, newest first, or records that
// there are none.
func (w *walker) match(base, pattern string) []string {
	listing, err := w.env.ReadDir(base)
	if err != nil {
		w.resp.Tried = append(w.resp.Tried, abi.Attempt{Path: path.Join(base, pattern), Reason: "cannot list " + base + ": " + unwrap(err)})
		return nil
	}
	pat := pattern
	if w.fold {
		pat = strings.ToLower(pattern)
	}
	var names []string
	for _, e := range listing {
		n := e.Name()
		if w.fold {
			n = strings.ToLower(n)
		}
		if ok, _ := path.Match(pat, n); ok && w.isDir(base, e) {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		w.resp.Tried = append(w.resp.Tried, abi.Attempt{Path: path.Join(base, pattern), Reason: "no directory matches"})
		return nil
	}
	slices.SortStableFunc(names, NewestFirst)
	return names
}

// isDir reports whether the entry is a directory, following a symlink (the sandbox keeps it inside).
func (w *walker) isDir(base string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	return e.Type()&fs.ModeSymlink != 0 && w.env.IsDir(path.Join(base, e.Name()))
}

func hasMeta(seg string) bool { return strings.ContainsAny(seg, `*?[`) }

func unwrap(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// NewestFirst orders directory names newest version first, for slices.SortFunc: negative when a
// comes before b. The package documentation gives the rules.
func NewestFirst(a, b string) int {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	i, j := 0, 0
	for {
		ka, va, ni := token(la, i)
		kb, vb, nj := token(lb, j)
		switch {
		case ka != kb:
			return int(ka) - int(kb)
		case ka == tokEnd:
			return strings.Compare(a, b) // equal but for case or leading zeros: any fixed order
		case ka == tokNumber:
			if c := compareNumbers(va, vb); c != 0 {
				return -c // the larger number first
			}
		case ka == tokText:
			if c := strings.Compare(va, vb); c != 0 {
				return c
			}
		}
		i, j = ni, nj
	}
}

// The tokens of a name, in the order they sort at the first difference between two names.
type tokenKind int

const (
	tokNumber tokenKind = iota // a run of digits
	tokDot                     // a "." that starts a further number: v9.10.1 before v9.10
	tokEnd                     // the end of the name: v9.10 before v9.10-rc1 and v9.10b
	tokText                    // any other byte, alphabetically
)

// token reads the token of s at i and returns its kind, its text and where the next one starts.
func token(s string, i int) (tokenKind, string, int) {
	switch {
	case i >= len(s):
		return tokEnd, "", i
	case isDigit(s[i]):
		e := i
		for e < len(s) && isDigit(s[e]) {
			e++
		}
		return tokNumber, s[i:e], e
	case s[i] == '.' && i+1 < len(s) && isDigit(s[i+1]):
		return tokDot, ".", i + 1
	}
	return tokText, s[i : i+1], i + 1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// compareNumbers compares two runs of decimal digits by value, however long.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
