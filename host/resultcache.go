package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/host/internal/cachefile"
	"github.com/pathfinder-dev/pathfinder/host/internal/ldso"
	"github.com/pathfinder-dev/pathfinder/host/internal/loader"
	"github.com/pathfinder-dev/pathfinder/host/internal/observe"
	"github.com/pathfinder-dev/pathfinder/host/internal/wasm"
)

// The result cache keeps find answers, found and not found alike, on disk with everything the search
// observed: each path it stat'ed or listed (through the sandbox's mediation of plugin file access, and
// the host's own looks), each variable it read, and the running executable. The key is what the
// search is (kind, name, platform) and what it runs on (config, packs, builtin module). An entry is
// used only when re-checking every observation shows nothing changed; then no module is compiled or
// instantiated at all. Loading is never answered from it: what a process has loaded is its own.
const resultCacheVersion = 1

// resultCacheLayout is part of the key, so that a pathfinder that knows another layout never reads
// an entry of this one: one that did not know Sites would take an entry whose discovery
// observations are kept as a hash for one whose observations are all in Seen.
const resultCacheLayout = "sites-by-hash"

type cachedResult struct {
	Version int          `json:"version"`
	Key     string       `json:"key"`
	Library *Library     `json:"library,omitempty"`
	Err     *cachedError `json:"error,omitempty"`
	Live    []string     `json:"live,omitempty"` // names the already-loaded step re-checks: process state is not cacheable
	// Sites is the hash of what site-packages discovery observed, when the search used it; those
	// observations are not repeated in Seen. See discoveryHash.
	Sites string                `json:"sites,omitempty"`
	Seen  []observe.Observation `json:"seen"`
}

type cachedError struct {
	Looked   []string  `json:"looked"`
	Attempts []Attempt `json:"attempts"`
}

// resultKey names the entry for a search; "" when the result cache is off.
func (f *Finder) resultKey(kind Kind, name string) string {
	if f.resultDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(f.keyBase() + string(kind) + "\x00" + name))
	return hex.EncodeToString(sum[:])
}

// resultKeyBase is what every key of this Finder shares: the platform, config, packs and module.
func (f *Finder) resultKeyBase() string {
	return fmt.Sprintf("pathfinder result %d\x00%s\x00%s\x00%x\x00%s\x00%s\x00",
		resultCacheVersion, resultCacheLayout, f.platform, f.cfg.hash.Sum(nil), f.catalog.Hash(), builtin.StepsModuleHash())
}

func (f *Finder) resultPath(key string) string {
	return filepath.Join(f.resultDir, key[:2], key+".json")
}

// cachedFind answers from the result cache when an entry for the search exists and everything it
// observed is unchanged. Anything else — no entry, a corrupt or foreign one, a change — is a miss.
func (f *Finder) cachedFind(kind Kind, name string) (*Explanation, bool) {
	key := f.resultKey(kind, name)
	if key == "" {
		return nil, false
	}
	data, ok := cachefile.Read(f.resultPath(key))
	if !ok {
		return nil, false
	}
	var c cachedResult
	if decodeEntry(data, &c) != nil || c.Version != resultCacheVersion || c.Key != key || (c.Library == nil) == (c.Err == nil) || len(c.Seen) == 0 {
		return nil, false
	}
	if c.Sites != "" && c.Sites != f.discoveryHash() {
		return nil, false
	}
	if observe.Check(c.Seen, f.opts.getenv) != "" {
		return nil, false
	}
	for _, n := range c.Live {
		if loader.StillAbsent(n) && observedLoaderSearch(c.Seen, n) {
			continue
		}
		if _, loaded := loader.Loaded(n); loaded {
			return nil, false
		}
	}
	ex := &Explanation{Name: name, Kind: kind, Steps: []StepTrace{{
		Step: "result-cache", Outcome: "found",
		Detail: fmt.Sprintf("nothing it depended on changed (%d observations)", len(c.Seen)),
	}}}
	if c.Library != nil {
		lib, why := f.revalidate(kind, name, *c.Library)
		if why != "" {
			return nil, false
		}
		ex.Result = &LoadedLibrary{Library: lib}
	} else {
		for i := range c.Err.Attempts { // shown as they are: an entry is not trusted to be escaped
			a := &c.Err.Attempts[i]
			a.Step, a.Path, a.Reason = wasm.Printable(a.Step), wasm.Printable(a.Path), wasm.Printable(a.Reason)
		}
		for i, l := range c.Err.Looked {
			c.Err.Looked[i] = wasm.Printable(l)
		}
		ex.Err = &SearchError{Name: name, Kind: kind, Err: ErrNotFound, Platform: f.platform, Looked: c.Err.Looked, Attempts: c.Err.Attempts}
		if e, ok := f.catalog.Lookup(kind, name); ok {
			ex.Err.(*SearchError).Ignored = f.ignoredFor(e)
		}
	}
	return ex, true
}

// revalidate checks a cached answer as a fresh search checks the candidate it takes, by the same
// code: a plugin step's through that step's grants and granted.check (inside a directory granted to
// the step, a regular file of the right format, not under stubs/), the system step's through the
// loader model (dlopen would find it there now, and it is no stub). So an entry that someone rewrote,
// checksum and all, or a library rewritten in place with the same size, inode and mtime, is a miss,
// never an answer. It returns the library with its found_via derived afresh, or why it is refused.
func (f *Finder) revalidate(kind Kind, name string, lib Library) (Library, string) {
	e, ok := f.catalog.Lookup(kind, name)
	switch {
	case !ok || lib.Name != name || lib.Kind != kind:
		return lib, "another library's entry"
	case !slices.Contains(f.cfg.orderFor(name), lib.Step):
		return lib, fmt.Sprintf("step %q is not in the order", lib.Step)
	}
	rec := &observe.Recorder{} // what this looks at, the entry's observations hold already
	switch lib.Step {
	case StepAlreadyLoaded:
		return lib, "an already-loaded answer is never cached"
	case StepSystem:
		l, err := f.loaderModel(rec)
		if err != nil || kind != DynamicLib {
			return lib, "no loader model"
		}
		p, err := resolveWith(l, name, e.FileNames(f.platform), rec)
		if err != nil || p != lib.Path {
			return lib, "the loader would not find it there now"
		}
		lib.FoundVia = "system-search"
		return lib, ""
	}
	p := f.cfg.plugins[lib.Step]
	if p == nil {
		return lib, "no such plugin"
	}
	g, err := f.grant(p, e, rec)
	if err != nil {
		return lib, err.Error()
	}
	guest, err := g.paths.ToGuest(lib.Path)
	if err != nil {
		return lib, err.Error()
	}
	g.deadline = time.Time{} // no plugin ran: the check is the whole cost
	host, why := g.check(guest, e, f.platform)
	if why == "" && host != lib.Path {
		why = "not the path it names"
	}
	lib.FoundVia = g.foundVia(guest, lib.Step)
	return lib, why
}

// storeFind records a fresh find's answer, unless it depended on something that may not hold next
// time: a step that failed (a timeout may pass), a library this process had already loaded, or what
// only a dlopen probe saw (seen is nil then).
func (f *Finder) storeFind(ctx context.Context, ex *Explanation, seen []observe.Observation) {
	key := f.resultKey(ex.Kind, ex.Name)
	if key == "" || ctx.Err() != nil || seen == nil {
		return
	}
	c := cachedResult{Version: resultCacheVersion, Key: key, Seen: seen}
	var se *SearchError
	switch {
	case ex.Result != nil && ex.Result.Step != StepAlreadyLoaded:
		c.Library = &ex.Result.Library
	case errors.As(ex.Err, &se) && errors.Is(se, ErrNotFound) && se.Dependency == "":
		c.Err = &cachedError{Looked: se.Looked, Attempts: se.Attempts}
	default:
		return
	}
	for _, st := range ex.Steps {
		switch {
		case st.Outcome == "failed":
			return
		case st.Step == StepAlreadyLoaded && st.Outcome == "nothing":
			c.Live = f.FileNames(ex.Kind, ex.Name)
		}
	}
	c.Sites, c.Seen = f.splitDiscovery(c.Seen)
	if exe, err := os.Executable(); err == nil {
		fi, err := os.Stat(exe)
		c.Seen = append(slices.Clone(c.Seen), observe.Observation{Path: exe, What: observe.Stat, Seen: observe.StatSeen(fi, err)})
	}
	data, err := json.Marshal(&c)
	if err != nil {
		return
	}
	cachefile.Write(f.resultPath(key), data)
}

// A Finder discovers the site-packages directories once (sitePackages) and every search it runs
// uses what that discovery found, so an entry that depended on discovery holds for this Finder
// exactly when its discovery saw what this Finder's saw. An entry keeps the hash of its discovery's
// observations in place of the observations themselves, and a lookup compares it with the hash of
// this Finder's own discovery: each discovery observation is made once per Finder, not once per name
// (the listing of /usr/lib, the python3 on PATH, every site directory, ...). Everything else an
// entry observed is still re-checked on every lookup.

// discoveryHash is the hash of this Finder's site-packages discovery; it runs discovery if no search
// has yet.
func (f *Finder) discoveryHash() string {
	f.sitePackages(nil)
	f.discoveryOnce.Do(func() { f.discovery = hashObservations(f.sitesSeen) })
	return f.discovery
}

// splitDiscovery takes out of seen what this Finder's discovery observed, and returns its hash in
// their place, when the search depended on discovery: when seen holds every observation of it, as
// discovery made them. Otherwise seen is returned whole and is re-checked whole.
func (f *Finder) splitDiscovery(seen []observe.Observation) (string, []observe.Observation) {
	if !f.sitesDone.Load() {
		return "", seen // no search of this Finder used discovery, this one neither
	}
	hash := f.discoveryHash()
	disc := make(map[observe.Observation]bool, len(f.sitesSeen))
	for _, o := range f.sitesSeen {
		disc[o] = true
	}
	var rest []observe.Observation
	for _, o := range seen {
		if !disc[o] {
			rest = append(rest, o)
		}
	}
	if len(disc) == 0 || len(seen)-len(rest) != len(disc) {
		return "", seen
	}
	return hash, rest
}

func hashObservations(list []observe.Observation) string {
	h := sha256.New()
	for _, o := range list {
		fmt.Fprintf(h, "%q %q %q %q\n", o.Root, o.Path, o.What, o.Seen)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// observedLoaderSearch reports whether seen holds the OS loader's search for soname, as the system
// step's model of it recorded it: LD_LIBRARY_PATH, the ld.so.cache file and the places it looked for
// soname. Then, with those unchanged, an RTLD_NOLOAD look for soname would search as before, and if
// no library was loaded or unloaded since it last found nothing (loader.StillAbsent), it would find
// nothing again: the look, a file-system search by glibc, is skipped.
func observedLoaderSearch(seen []observe.Observation, soname string) bool {
	var env, cache, place bool
	for _, o := range seen {
		switch {
		case o.Root != "":
		case o.What == observe.Env && o.Path == "LD_LIBRARY_PATH":
			env = true
		case o.What == observe.Stat && o.Path == ldso.DefaultCachePath:
			cache = true
		case o.What == observe.Stat && filepath.Base(o.Path) == soname:
			place = true
		}
	}
	return env && cache && place
}
