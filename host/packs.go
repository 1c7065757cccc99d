package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/BurntSushi/toml"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/host/internal/catalog"
)

// Where descriptor packs come from, in the order they are read. A later pack may redefine a library
// of an earlier one only with replaces = true.
const (
	PackFromBuiltin = "builtin"           // builtin:nvidia.toml, inside the binary
	PackFromSystem  = "system"            // /etc/pathfinder/packs.d
	PackFromUser    = "user"              // $XDG_CONFIG_HOME/pathfinder/packs.d
	PackFromVenv    = "$VIRTUAL_ENV"      // $VIRTUAL_ENV/share/pathfinder/packs.d, so a pip package can ship one
	PackFromConda   = "$CONDA_PREFIX"     // $CONDA_PREFIX/share/pathfinder/packs.d, so a conda package can ship one
	PackFromEnv     = "$PATHFINDER_PACKS" // files or directories, a path list
	PackFromConfig  = "config"            // [packs] dirs
)

// PackInfo is a descriptor pack that was read.
type PackInfo struct {
	File   string `json:"file"`   // the pack's absolute path, or builtin:nvidia.toml
	Origin string `json:"origin"` // a PackFrom constant; for config, "config FILE:LINE:COL" of the [packs] dirs that named it
	// Libraries are the names the pack defines, by kind, in pack order.
	Libraries map[Kind][]string `json:"libraries"`
	// Replaces lists what it redefines with replaces = true: `library "cudart" of builtin:nvidia.toml`.
	Replaces []string `json:"replaces,omitempty"`
	// ReplacedBy lists what a later pack redefined: `library "cudart" by /etc/pathfinder/packs.d/a.toml`.
	ReplacedBy []string `json:"replaced_by,omitempty"`
}

// PackDir is a place packs are looked for and whether it exists.
type PackDir struct {
	Path    string `json:"path"`
	Origin  string `json:"origin"`
	Present bool   `json:"present"`
	Note    string `json:"note,omitempty"` // why it was not looked at
}

// packSet is what discovery found: the packs, in order, with their contents, and where it looked.
type packSet struct {
	packs []catalog.Pack
	dirs  []PackDir

	infoOnce sync.Once // what each pack defines is worked out only for listings
	info     []PackInfo
}

// discoverPacks finds every descriptor pack: the builtin one, the system and user pack directories,
// share/pathfinder/packs.d under $VIRTUAL_ENV and $CONDA_PREFIX, $PATHFINDER_PACKS and the config's
// [packs] dirs. Directories the machine may or may not have are skipped when absent; what
// $PATHFINDER_PACKS or the config names must exist. A file reached twice is read once.
func discoverPacks(opts *Options, cfg *config) (*packSet, error) {
	s := &packSet{}
	s.packs = append(s.packs, catalog.Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()})
	s.info = append(s.info, PackInfo{File: "builtin:nvidia.toml", Origin: PackFromBuiltin})
	var seen []os.FileInfo
	addFile := func(file, origin string, fi os.FileInfo) error {
		for _, old := range seen {
			if os.SameFile(old, fi) {
				return nil
			}
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("pathfinder: pack %s (%s): %w", file, origin, unwrapPath(err))
		}
		seen = append(seen, fi)
		s.packs = append(s.packs, catalog.Pack{Name: file, Data: data})
		s.info = append(s.info, PackInfo{File: file, Origin: origin})
		return nil
	}
	// addPath reads a pack file, or every *.toml file of a directory in name order.
	addPath := func(p, origin string, required bool) error {
		fi, err := os.Stat(p)
		if err != nil {
			if !required && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				s.dirs = append(s.dirs, PackDir{Path: p, Origin: origin})
				return nil
			}
			return fmt.Errorf("pathfinder: packs: %s (%s): %w", p, origin, unwrapPath(err))
		}
		s.dirs = append(s.dirs, PackDir{Path: p, Origin: origin, Present: true})
		if !fi.IsDir() {
			return addFile(p, origin, fi)
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return fmt.Errorf("pathfinder: packs: %s (%s): %w", p, origin, unwrapPath(err))
		}
		for _, e := range entries { // sorted by name
			name := e.Name()
			if !strings.HasSuffix(name, ".toml") || strings.HasPrefix(name, ".") {
				continue // a README, an editor's backup
			}
			file := filepath.Join(p, name)
			fi, err := os.Stat(file)
			if err != nil {
				return fmt.Errorf("pathfinder: pack %s (%s): %w", file, origin, unwrapPath(err))
			}
			if !fi.Mode().IsRegular() {
				continue
			}
			if err := addFile(file, origin, fi); err != nil {
				return err
			}
		}
		return nil
	}
	sys := opts.SystemConfigDir
	if sys == "" {
		sys = "/etc/pathfinder"
	}
	if err := addPath(filepath.Join(sys, "packs.d"), PackFromSystem, false); err != nil {
		return nil, err
	}
	if dir := userDir(opts.getenv, "XDG_CONFIG_HOME", ".config"); dir != "" {
		if err := addPath(filepath.Join(dir, "pathfinder", "packs.d"), PackFromUser, false); err != nil {
			return nil, err
		}
	}
	for _, v := range []struct{ name, origin string }{{"VIRTUAL_ENV", PackFromVenv}, {"CONDA_PREFIX", PackFromConda}} {
		prefix := opts.getenv(v.name)
		switch {
		case prefix == "":
			continue
		case !filepath.IsAbs(prefix):
			s.dirs = append(s.dirs, PackDir{Path: prefix, Origin: v.origin, Note: "a relative path: never resolved against the working directory"})
			continue
		}
		if err := addPath(filepath.Join(prefix, "share", "pathfinder", "packs.d"), v.origin, false); err != nil {
			return nil, err
		}
	}
	for _, p := range filepath.SplitList(opts.getenv("PATHFINDER_PACKS")) {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("pathfinder: $PATHFINDER_PACKS entry %q is a relative path: refused, never resolved against the working directory", p)
		}
		if err := addPath(filepath.Clean(p), PackFromEnv, true); err != nil {
			return nil, err
		}
	}
	for _, p := range cfg.packDirs {
		origin := PackFromConfig
		if at := cfg.originOf("packs.dirs"); at != "" {
			origin = "config " + at
		}
		if err := addPath(p, origin, true); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// describe records what each pack defines and replaces; the packs were checked by catalog.New.
func (s *packSet) describe() {
	type key struct {
		kind Kind
		name string
	}
	owner := map[key]int{} // which pack defines each name so far
	for i, p := range s.packs {
		var tables map[string][]struct {
			Name     string `toml:"name"`
			Replaces bool   `toml:"replaces"`
		}
		toml.Decode(string(p.Data), &tables) // catalog.New decoded it strictly; only the names matter here
		s.info[i].Libraries = map[Kind][]string{}
		for _, k := range catalog.Kinds {
			for _, t := range tables[k.Table] {
				s.info[i].Libraries[k.Kind] = append(s.info[i].Libraries[k.Kind], t.Name)
				kk := key{k.Kind, t.Name}
				if prev, ok := owner[kk]; ok && prev != i && t.Replaces {
					s.info[i].Replaces = append(s.info[i].Replaces, fmt.Sprintf("%s %q of %s", k.Table, t.Name, s.info[prev].File))
					s.info[prev].ReplacedBy = append(s.info[prev].ReplacedBy, fmt.Sprintf("%s %q by %s", k.Table, t.Name, s.info[i].File))
				}
				owner[kk] = i
			}
		}
	}
}

// Packs lists the descriptor packs that were read, in the order they were read.
func (f *Finder) Packs() []PackInfo {
	f.packs.infoOnce.Do(f.packs.describe)
	out := make([]PackInfo, len(f.packs.info))
	copy(out, f.packs.info)
	return out
}

// PackDirs lists every place packs were looked for, in order, and whether it exists.
func (f *Finder) PackDirs() []PackDir { return append([]PackDir(nil), f.packs.dirs...) }
