package catalog

import (
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/internal/cachefile"
)

// Decoding TOML is most of a warm process's start-up (milliseconds for the builtin pack); a checked
// catalog is kept as JSON under its packs' hash, which decodes several times faster. A cache file
// that is missing, unreadable or for other packs is ignored and rewritten.

type cachedCatalog struct {
	Hash    string   `json:"hash"`
	Entries []*Entry `json:"entries"` // in pack order, kind by kind
}

// Cached is New with its result kept in dir ("" for no cache).
func Cached(dir string, packs ...Pack) (*Catalog, error) {
	if dir == "" {
		return New(packs...)
	}
	hash := hashPacks(packs)
	path := filepath.Join(dir, "catalog-"+hash[:32]+".json")
	if data, ok := cachefile.Read(path); ok {
		var cc cachedCatalog
		if json.Unmarshal(data, &cc) == nil && cc.Hash == hash && !slices.Contains(cc.Entries, nil) {
			return fromEntries(hash, cc.Entries), nil
		}
	}
	c, err := New(packs...)
	if err != nil {
		return nil, err
	}
	cc := cachedCatalog{Hash: hash}
	for _, k := range Kinds {
		for _, n := range c.names[k.Kind] {
			cc.Entries = append(cc.Entries, c.byName[key{k.Kind, n}])
		}
	}
	if data, err := json.Marshal(&cc); err == nil {
		cachefile.Write(path, data)
	}
	return c, nil
}

func fromEntries(hash string, entries []*Entry) *Catalog {
	c := &Catalog{byName: map[key]*Entry{}, names: map[abi.Kind][]string{}, hash: hash}
	for _, e := range entries {
		c.byName[key{e.Kind, e.Name}] = e
		c.names[e.Kind] = append(c.names[e.Kind], e.Name)
	}
	return c
}
