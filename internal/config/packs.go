package config

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

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// Packs is what pack discovery found: the packs, in order, with their contents, and where it looked.
type Packs struct {
	List []catalog.Pack
	Dirs []inspect.PackDir

	infoOnce sync.Once // what each pack defines is worked out only for listings
	info     []inspect.PackInfo
}

// DiscoverPacks finds every descriptor pack: the builtin one, the system and user pack directories,
// share/pathfinder/packs.d under $VIRTUAL_ENV and $CONDA_PREFIX, $PATHFINDER_PACKS and the config's
// [packs] dirs. Directories the machine may or may not have are skipped when absent; what
// $PATHFINDER_PACKS or the config names must exist. A file reached twice is read once.
func DiscoverPacks(opts Options, cfg *Config) (*Packs, error) {
	s := &Packs{}
	s.List = append(s.List, catalog.Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()})
	s.info = append(s.info, inspect.PackInfo{File: "builtin:nvidia.toml", Origin: inspect.PackFromBuiltin})
	var seen []os.FileInfo
	addFile := func(file, origin string, fi os.FileInfo) error {
		for _, old := range seen {
			if os.SameFile(old, fi) {
				return nil
			}
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("pack %s (%s): %w", file, origin, observe.Cause(err))
		}
		seen = append(seen, fi)
		s.List = append(s.List, catalog.Pack{Name: file, Data: data})
		s.info = append(s.info, inspect.PackInfo{File: file, Origin: origin})
		return nil
	}
	// addPath reads a pack file, or every *.toml file of a directory in name order.
	addPath := func(p, origin string, required bool) error {
		fi, err := os.Stat(p)
		if err != nil {
			if !required && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				s.Dirs = append(s.Dirs, inspect.PackDir{Path: p, Origin: origin})
				return nil
			}
			return fmt.Errorf("packs: %s (%s): %w", p, origin, observe.Cause(err))
		}
		s.Dirs = append(s.Dirs, inspect.PackDir{Path: p, Origin: origin, Present: true})
		if !fi.IsDir() {
			return addFile(p, origin, fi)
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return fmt.Errorf("packs: %s (%s): %w", p, origin, observe.Cause(err))
		}
		for _, e := range entries { // sorted by name
			name := e.Name()
			if !strings.HasSuffix(name, ".toml") || strings.HasPrefix(name, ".") {
				continue // a README, an editor's backup
			}
			file := filepath.Join(p, name)
			fi, err := os.Stat(file)
			if err != nil {
				return fmt.Errorf("pack %s (%s): %w", file, origin, observe.Cause(err))
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
	if err := addPath(filepath.Join(opts.systemDir(), "packs.d"), inspect.PackFromSystem, false); err != nil {
		return nil, err
	}
	if dir := UserDir(opts.Getenv, "XDG_CONFIG_HOME", ".config"); dir != "" {
		if err := addPath(filepath.Join(dir, "pathfinder", "packs.d"), inspect.PackFromUser, false); err != nil {
			return nil, err
		}
	}
	for _, v := range []struct{ name, origin string }{{"VIRTUAL_ENV", inspect.PackFromVenv}, {"CONDA_PREFIX", inspect.PackFromConda}} {
		prefix := opts.Getenv(v.name)
		switch {
		case prefix == "":
			continue
		case !filepath.IsAbs(prefix):
			s.Dirs = append(s.Dirs, inspect.PackDir{Path: prefix, Origin: v.origin, Note: "a relative path: never resolved against the working directory"})
			continue
		}
		if err := addPath(filepath.Join(prefix, "share", "pathfinder", "packs.d"), v.origin, false); err != nil {
			return nil, err
		}
	}
	for _, p := range filepath.SplitList(opts.Getenv("PATHFINDER_PACKS")) {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("$PATHFINDER_PACKS entry %q is a relative path: refused, never resolved against the working directory", p)
		}
		if err := addPath(filepath.Clean(p), inspect.PackFromEnv, true); err != nil {
			return nil, err
		}
	}
	for _, p := range cfg.PackDirs {
		origin := inspect.PackFromConfig
		if at := cfg.OriginOf("packs.dirs"); at != "" {
			origin = "config " + at
		}
		if err := addPath(p, origin, true); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Info lists what each pack defines and replaces; the packs were checked by catalog.New.
func (s *Packs) Info() []inspect.PackInfo {
	s.infoOnce.Do(s.describe)
	return append([]inspect.PackInfo(nil), s.info...)
}

func (s *Packs) describe() {
	type key struct {
		kind abi.Kind
		name string
	}
	owner := map[key]int{} // which pack defines each name so far
	for i, p := range s.List {
		var tables map[string][]struct {
			Name     string `toml:"name"`
			Replaces bool   `toml:"replaces"`
		}
		toml.Decode(string(p.Data), &tables) // catalog.New decoded it strictly; only the names matter here
		s.info[i].Libraries = map[abi.Kind][]string{}
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
