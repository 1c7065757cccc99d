package catalog

import (
	"encoding/binary"
	"errors"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// Decoding TOML is most of a warm process's start-up (10 ms for the builtin pack); a checked catalog
// is kept under its packs' hash (cachedir.CatalogFile, a checksummed file) in a compact form that
// decodes in a tenth of a millisecond (JSON took a whole one, gob half of one plus its package's
// start-up). A cache file that is missing, unreadable, for other packs or for another layout of
// Entry is ignored and rewritten.
//
// The form: the packs' hash, the layout (Entry's field names and kinds), the entry count, then each
// entry's fields in order: a string as uvarint length and bytes, a []string as uvarint count and
// strings, a map[string]string as uvarint count and key, value strings in key order, a bool as one
// byte.

// entryLayout is what of Entry is stored, worked out on first use (not at start-up, which
// `pathfinder version` pays too): the fields, Library's then Kind and Pack, and the layout, their
// names in order with their types; a file written for another layout is not read.
var entryLayout = sync.OnceValues(func() ([]reflect.StructField, string) {
	var fields []reflect.StructField
	var b strings.Builder
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Entry]()) {
		if f.IsExported() && !f.Anonymous {
			fields = append(fields, f)
			b.WriteString(f.Name + ":" + f.Type.String() + ";")
		}
	}
	return fields, b.String()
})

// remembered keeps the last catalog this process read, by its packs' contents and the cache
// directory: a catalog is a function of its packs alone, and reading it, even from its cache file,
// was half of an engine.New in a process that makes Engines one after another. It is used while its
// cache file is as it was, so that a process still reads (and rewrites) a cache file someone changed.
var remembered struct {
	mu   sync.Mutex
	key  string
	file string // the catalog's cache file as last seen, by observe.StatSeen
	cat  *Catalog
}

// Remembered is Cached, remembered for the next call with the same packs and dir.
func Remembered(dir string, packs []Pack) (*Catalog, error) {
	hash := hashPacks(packs)
	key := dir + "\x00" + hash
	remembered.mu.Lock()
	if remembered.key == key && cacheFileSeen(dir, remembered.cat) == remembered.file {
		defer remembered.mu.Unlock()
		return remembered.cat, nil
	}
	remembered.mu.Unlock()
	cat, err := cached(dir, hash, packs)
	if err != nil {
		return nil, err
	}
	remembered.mu.Lock()
	remembered.key, remembered.file, remembered.cat = key, cacheFileSeen(dir, cat), cat
	remembered.mu.Unlock()
	return cat, nil
}

// cacheFileSeen is a stat of the file Cached keeps cat in under dir; "" for the builtin catalog,
// which is kept in no file.
func cacheFileSeen(dir string, cat *Catalog) string {
	if dir == "" || cat.hash == builtinHash {
		return ""
	}
	fi, err := os.Stat(cachedir.CatalogFile(dir, cat.Hash()))
	return observe.StatSeen(fi, err)
}

//go:generate go run ./gen

// Cached is New with its result kept in dir ("" for no cache). The builtin pack alone, the common
// case, is in the binary already (builtin_gen.go, which go generate writes): neither decoded nor
// cached.
func Cached(dir string, packs ...Pack) (*Catalog, error) {
	return cached(dir, hashPacks(packs), packs)
}

// cached is Cached of packs whose hashPacks is hash.
func cached(dir, hash string, packs []Pack) (*Catalog, error) {
	if hash == builtinHash {
		entries := make([]*Entry, len(builtinEntries))
		for i := range builtinEntries {
			entries[i] = &builtinEntries[i]
		}
		return fromEntries(hash, entries), nil
	}
	if dir == "" {
		return New(packs...)
	}
	path := cachedir.CatalogFile(dir, hash)
	if data, ok := cachedir.Read(path); ok {
		if entries, err := decodeEntries(data, hash); err == nil {
			return fromEntries(hash, entries), nil
		}
	}
	c, err := New(packs...)
	if err != nil {
		return nil, err
	}
	var entries []*Entry
	for _, k := range Kinds {
		for _, n := range c.names[k.Kind] {
			entries = append(entries, c.byName[key{k.Kind, n}])
		}
	}
	cachedir.Write(path, encodeEntries(hash, entries))
	return c, nil
}

func encodeEntries(hash string, entries []*Entry) []byte {
	var b []byte
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	fields, layout := entryLayout()
	str(hash)
	str(layout)
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		v := reflect.ValueOf(e).Elem()
		for _, f := range fields {
			fv := v.FieldByIndex(f.Index)
			switch fv.Kind() {
			case reflect.String:
				str(fv.String())
			case reflect.Slice:
				b = binary.AppendUvarint(b, uint64(fv.Len()))
				for i := range fv.Len() {
					str(fv.Index(i).String())
				}
			case reflect.Map:
				m := fv.Interface().(map[string]string)
				b = binary.AppendUvarint(b, uint64(len(m)))
				for _, k := range slices.Sorted(maps.Keys(m)) {
					str(k)
					str(m[k])
				}
			case reflect.Bool:
				if fv.Bool() {
					b = append(b, 1)
				} else {
					b = append(b, 0)
				}
			}
		}
	}
	return b
}

var errCorrupt = errors.New("catalog cache: not a catalog of this layout")

func decodeEntries(data []byte, hash string) ([]*Entry, error) {
	d := decoder{data: data}
	fields, layout := entryLayout()
	if d.string() != hash || d.string() != layout {
		return nil, errCorrupt
	}
	n := d.uvarint()
	if n > uint64(len(data)) {
		return nil, errCorrupt
	}
	entries := make([]*Entry, 0, n)
	for range n {
		e := &Entry{}
		v := reflect.ValueOf(e).Elem()
		for _, f := range fields {
			fv := v.FieldByIndex(f.Index)
			switch fv.Kind() {
			case reflect.String:
				fv.SetString(d.string())
			case reflect.Slice:
				k := d.uvarint()
				if k == 0 || k > uint64(len(data)) {
					continue
				}
				ss := make([]string, k)
				for i := range ss {
					ss[i] = d.string()
				}
				fv.Set(reflect.ValueOf(ss))
			case reflect.Map:
				k := d.uvarint()
				if k == 0 || k > uint64(len(data)) {
					continue
				}
				m := make(map[string]string, k)
				for range k {
					key := d.string()
					m[key] = d.string()
				}
				fv.Set(reflect.ValueOf(m))
			case reflect.Bool:
				fv.SetBool(d.byte() == 1)
			}
		}
		entries = append(entries, e)
	}
	if d.bad || len(d.data) != 0 {
		return nil, errCorrupt
	}
	return entries, nil
}

// decoder reads the form; a short or malformed input sets bad and reads as zero values from then on.
type decoder struct {
	data []byte
	bad  bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.bad, d.data = true, nil
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.data)) {
		d.bad, d.data = true, nil
		return ""
	}
	s := string(d.data[:n])
	d.data = d.data[n:]
	return s
}

func (d *decoder) byte() byte {
	if len(d.data) == 0 {
		d.bad = true
		return 0
	}
	c := d.data[0]
	d.data = d.data[1:]
	return c
}

func fromEntries(hash string, entries []*Entry) *Catalog {
	c := &Catalog{byName: map[key]*Entry{}, names: map[abi.Kind][]string{}, hash: hash}
	for _, e := range entries {
		c.byName[key{e.Kind, e.Name}] = e
		c.names[e.Kind] = append(c.names[e.Kind], e.Name)
	}
	return c
}
