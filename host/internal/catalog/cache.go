package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/pathfinder-dev/pathfinder/abi"
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
	if data, err := os.ReadFile(path); err == nil {
		var cc cachedCatalog
		if json.Unmarshal(data, &cc) == nil && cc.Hash == hash {
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
	if data, err := json.Marshal(&cc); err == nil && os.MkdirAll(dir, 0o755) == nil {
		if tmp, err := os.CreateTemp(dir, ".tmp-*"); err == nil {
			_, werr := tmp.Write(data)
			if tmp.Close() != nil || werr != nil || os.Rename(tmp.Name(), path) != nil {
				os.Remove(tmp.Name())
			}
		}
	}
	return c, nil
}

func fromEntries(hash string, entries []*Entry) *Catalog {
	c := &Catalog{byName: map[key]*Entry{}, names: map[abi.Kind][]string{}, hash: hash}
	for _, e := range entries {
		if e == nil {
			continue
		}
		c.byName[key{e.Kind, e.Name}] = e
		c.names[e.Kind] = append(c.names[e.Kind], e.Name)
	}
	return c
}
