// Package resultcache keeps find answers, found and not found alike, on disk with everything the
// search observed: each path it stat'ed or listed (through the sandbox's mediation of plugin file
// access, and the host's own looks), each variable it read, and the running executable. The key is
// what the search is (kind, name, platform) and what it runs on (config, packs, builtin module). The
// host uses an entry only when re-checking every observation shows nothing changed, and re-checks
// the answer itself as it would a fresh candidate; then no module is compiled or instantiated at all.
// Loading is never answered from it: what a process has loaded is its own.
package resultcache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
	"github.com/pathfinder-dev/pathfinder/internal/loadermodel"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// Version is the entries' layout version, written in each.
const Version = 1

// layout is part of the key, so that a pathfinder that knows another layout never reads an entry of
// this one: one that did not know Sites would take an entry whose discovery observations are kept
// as a hash for one whose observations are all in Seen.
const layout = "sites-by-hash"

// Entry is one search's answer and what it depended on.
type Entry struct {
	Version int      `json:"version"`
	Key     string   `json:"key"`
	Library *Library `json:"library,omitempty"`
	Err     *Error   `json:"error,omitempty"`
	Live    []string `json:"live,omitempty"` // names the already-loaded step re-checks: process state is not cacheable
	// Sites is the hash of what site-packages discovery observed, when the search used it; those
	// observations are not repeated in Seen (SplitDiscovery).
	Sites string                `json:"sites,omitempty"`
	Seen  []observe.Observation `json:"seen"`
	// Ignored is what the search's steps said they passed over (a CUDA_HOME that CUDA_PATH hides).
	Ignored []Ignored `json:"ignored,omitempty"`
}

// Library is a library found, as search.Library.
type Library struct {
	Name        string           `json:"name"`
	Kind        abi.Kind         `json:"kind"`
	Path        string           `json:"path"`
	RealPath    string           `json:"real_path,omitempty"`
	FoundVia    string           `json:"found_via"`
	Step        string           `json:"step"`
	LoadProblem string           `json:"load_problem,omitempty"`
	CUDA        string           `json:"cuda,omitempty"`
	Version     string           `json:"version,omitempty"`
	VersionFrom string           `json:"version_from,omitempty"`
	Compat      string           `json:"compat,omitempty"`
	Notes       []string         `json:"notes,omitempty"`
	PassedOver  []search.Attempt `json:"passed_over,omitempty"`
}

// Error is a library not found: the file names looked for and every place looked.
type Error struct {
	Looked   []string         `json:"looked"`
	Attempts []search.Attempt `json:"attempts"`
}

// Ignored is a variable a step passed over, with the step.
type Ignored struct {
	Step   string `json:"step"`
	Name   string `json:"name"` // the variable, "CUDA_HOME"
	Value  string `json:"value"`
	Reason string `json:"reason"`
}

// Store is the entries under one directory.
type Store struct {
	dir  string // "" when the cache is off
	base string // what every key of the store shares

	writeErr cachedir.FirstError
}

// New returns the store under dir (cachedir.Results; "" for none) for searches that share base: the platform and the
// hashes of the config, the packs and the builtin module.
func New(dir string, base ...string) *Store {
	s := &Store{dir: dir, base: fmt.Sprintf("pathfinder result %d\x00%s\x00", Version, layout)}
	for _, b := range base {
		s.base += b + "\x00"
	}
	return s
}

// Key names the entry for a search of kind and name under the compatibility check's inputs check
// (its mode, the driver, the anchor); "" when the cache is off.
func (s *Store) Key(kind abi.Kind, name, check string) string {
	if s.dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s.base + string(kind) + "\x00" + name + "\x00" + check))
	return hex.EncodeToString(sum[:])
}

// Path is the file of the entry key.
func (s *Store) Path(key string) string { return cachedir.ResultFile(s.dir, key) }

// Read returns the entry key when there is a well-formed one: of this version and key, an answer or
// an error (not both), with observations. Anything else — no entry, a corrupt or foreign one — is nil.
func (s *Store) Read(key string) *Entry {
	if key == "" {
		return nil
	}
	data, ok := cachedir.Read(s.Path(key))
	if !ok {
		return nil
	}
	var c Entry
	if decodeEntry(data, &c) != nil || c.Version != Version || c.Key != key || (c.Library == nil) == (c.Err == nil) || len(c.Seen) == 0 {
		return nil
	}
	return &c
}

// Write stores c as the entry key.
func (s *Store) Write(key string, c *Entry) {
	c.Version, c.Key = Version, key
	data, err := json.Marshal(c)
	if err == nil {
		err = cachedir.Write(s.Path(key), data)
	}
	s.writeErr.Note(err)
}

// WriteError is the first error a Write met, nil when none did.
func (s *Store) WriteError() error { return s.writeErr.Err() }

// An Engine discovers the site-packages directories once and every search it runs uses what that
// discovery found, so an entry that depended on discovery holds for this Engine exactly when its
// discovery saw what this Engine's saw. An entry keeps the hash of its discovery's observations in
// place of the observations themselves, and a lookup compares it with the hash of the Engine's own
// discovery: each discovery observation is made once per Engine, not once per name (the listing of
// /usr/lib, the python3 on PATH, every site directory, ...). Everything else an entry observed is
// still re-checked on every lookup.

// HashObservations is the hash by which an entry names what discovery observed.
func HashObservations(list []observe.Observation) string {
	h := sha256.New()
	for _, o := range list {
		fmt.Fprintf(h, "%q %q %q %q\n", o.Root, o.Path, o.What, o.Seen)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// SplitDiscovery takes out of seen what discovery observed (disc, whose hash is hash) and returns
// the hash in their place, when seen holds every observation of discovery as discovery made them.
// Otherwise seen is returned whole and is re-checked whole.
func SplitDiscovery(seen, disc []observe.Observation, hash string) (string, []observe.Observation) {
	set := make(map[observe.Observation]bool, len(disc))
	for _, o := range disc {
		set[o] = true
	}
	var rest []observe.Observation
	for _, o := range seen {
		if !set[o] {
			rest = append(rest, o)
		}
	}
	if len(set) == 0 || len(seen)-len(rest) != len(set) {
		return "", seen
	}
	return hash, rest
}

// ObservedLoaderSearch reports whether seen holds the OS loader's search for soname, as the system
// step's model of it recorded it: LD_LIBRARY_PATH, the ld.so.cache file and the places it looked for
// soname. Then, with those unchanged, an RTLD_NOLOAD look for soname would search as before, and if
// no library was loaded or unloaded since it last found nothing (loader.StillAbsent), it would find
// nothing again: the look, a file-system search by glibc, is skipped.
func ObservedLoaderSearch(seen []observe.Observation, soname string) bool {
	var env, cache, place bool
	for _, o := range seen {
		switch {
		case o.Root != "":
		case o.What == observe.Env && o.Path == "LD_LIBRARY_PATH":
			env = true
		case o.What == observe.Stat && o.Path == loadermodel.DefaultCachePath:
			cache = true
		case o.What == observe.Stat && filepath.Base(o.Path) == soname:
			place = true
		}
	}
	return env && cache && place
}
