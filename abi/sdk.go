package abi

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Env is what a plugin sees of the machine: the granted directories, read-only, as one file system
// rooted at "/", and the granted environment variables. Under wasm it is the WASI sandbox; in a native
// test it is whatever the test builds (an fstest.MapFS, an os.DirFS).
type Env struct {
	FS     fs.FS
	Getenv func(string) string
	Logf   func(format string, args ...any) // goes to the host's trace; nil discards
	// SystemResolve asks the host where the OS loader would find the catalog library name (the
	// capability CapabilitySystemResolve); nil means not granted.
	SystemResolve func(name string) (string, error)
}

// ErrNotGranted is returned for a capability the plugin was not granted.
var ErrNotGranted = errors.New(textNotGranted)

// Resolve calls SystemResolve, or says the capability is missing.
func (e Env) Resolve(name string) (string, error) {
	if e.SystemResolve == nil {
		return "", ErrNotGranted
	}
	return e.SystemResolve(name)
}

// SearchFunc is a step's search: one function over an Env and a Request.
type SearchFunc func(env Env, req *Request) *Response

// Plugin is what a plugin registers.
type Plugin struct {
	Name    string
	Version string
	Env     []string // env vars the plugin wants; the host grants only what its config allows
	Search  SearchFunc
}

var registry = map[string]Plugin{}

// Register makes a search available to the host. A plugin's main package calls it from init; a module
// may register several (one module, several steps, each picked by the request's entry).
func Register(p Plugin) {
	if p.Name == "" || p.Search == nil {
		panic("abi: Register needs a name and a search function")
	}
	if _, dup := registry[p.Name]; dup {
		panic("abi: duplicate plugin " + p.Name)
	}
	registry[p.Name] = p
}

// lookup picks the registered search for req: by entry name, else the only one registered.
func lookup(req *Request) (Plugin, error) {
	if req.Entry != "" {
		if p, ok := registry[req.Entry]; ok {
			return p, nil
		}
		return Plugin{}, fmt.Errorf(textNoSuchSearch, req.Entry)
	}
	if len(registry) == 1 {
		for _, p := range registry {
			return p, nil
		}
	}
	if p, ok := registry[req.Step]; ok {
		return p, nil
	}
	return Plugin{}, fmt.Errorf(textNoSuchSearchHas, req.Step, strings.Join(describe().Names, ", "))
}

func describe() Description {
	d := Description{ABI: Version}
	for name, p := range registry {
		d.Names = append(d.Names, name)
		d.Env = append(d.Env, p.Env...)
		if d.Version == "" {
			d.Version = p.Version
		}
	}
	sort.Strings(d.Names)
	sort.Strings(d.Env)
	return d
}

// Run runs the registered search for req; the wasm exports call it, and so can native tests.
func Run(env Env, req *Request) *Response {
	if req.ABI != Version {
		return &Response{Error: fmt.Sprintf(textVersionMismatch, req.ABI, Version)}
	}
	p, err := lookup(req)
	if err != nil {
		return &Response{Error: err.Error()}
	}
	resp := p.Search(env, req)
	if resp == nil {
		resp = &Response{}
	}
	return resp
}

// rel turns a host path into an fs.FS path.
func rel(p string) string {
	p = strings.TrimLeft(path.Clean("/"+p), "/")
	if p == "" {
		return "."
	}
	return p
}

// Stat stats the host path p in the sandbox.
func (e Env) Stat(p string) (fs.FileInfo, error) { return fs.Stat(e.FS, rel(p)) }

// IsDir reports whether the host path p is a directory the sandbox can see.
func (e Env) IsDir(p string) bool {
	fi, err := e.Stat(p)
	return err == nil && fi.IsDir()
}

// ReadDir lists the host directory p in the sandbox, sorted by name.
func (e Env) ReadDir(p string) ([]fs.DirEntry, error) { return fs.ReadDir(e.FS, rel(p)) }

// Lookupenv returns a granted variable's value; an ungranted one reads as unset.
func (e Env) Lookupenv(name string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(name)
}

func (e Env) logf(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	}
}

// Find is the search every first-party step shares: for each directory in order, each declared file
// name in order (newest first), what exists becomes a candidate — the file itself, or for a header
// set the directory that holds the header. Names match case-insensitively for a Windows
// target. (WASI shows no permission bits, so whether a binary is executable is the host's check.)
// Every directory that does not exist or holds none of the names is recorded in the response, the
// latter with what it holds (the first MaxListed names), as cuda.pathfinder's error lists a directory:
// a README.txt where libcudadevrt.a was expected says what went wrong.
// A directory's candidates come before the next directory's; the host takes the first valid one.
func Find(env Env, req *Request, resp *Response, dirs []string) {
	names := req.Library.FileNames(req.Platform)
	for _, dir := range dirs {
		fi, err := env.Stat(dir)
		if err != nil || !fi.IsDir() {
			resp.Tried = append(resp.Tried, Attempt{Path: dir, Reason: textNoSuchDirectory})
			continue
		}
		var listing []fs.DirEntry
		if req.Platform.OS == "windows" {
			listing, _ = env.ReadDir(dir)
		}
		found := false
		for _, name := range names {
			p := path.Join(dir, name)
			if listing != nil {
				p = path.Join(dir, foldName(listing, name))
			}
			fi, err := env.Stat(p)
			switch {
			case err != nil:
				continue
			case fi.IsDir():
				resp.Tried = append(resp.Tried, Attempt{Path: p, Reason: textIsDirectory})
				continue
			case req.Kind == KindHeaderDir:
				resp.Candidates = append(resp.Candidates, Candidate{Path: dir})
			default:
				resp.Candidates = append(resp.Candidates, Candidate{Path: p})
			}
			found = true
		}
		if !found {
			resp.Tried = append(resp.Tried, Attempt{Path: dir, Reason: fmt.Sprintf(textNoneOf, strings.Join(names, ", ")) + env.holding(dir)})
		}
		env.logf(textSearched, dir)
	}
}

// MaxListed is how many of a directory's names a "none of" attempt lists.
const MaxListed = 20

// holding says what the directory dir holds, its first MaxListed names; nothing when it cannot be listed.
func (e Env) holding(dir string) string {
	listing, err := e.ReadDir(dir)
	switch {
	case err != nil:
		return ""
	case len(listing) == 0:
		return textItIsEmpty
	}
	var names []string
	for _, entry := range listing[:min(len(listing), MaxListed)] {
		names = append(names, entry.Name())
	}
	s := strings.Join(names, ", ")
	if more := len(listing) - len(names); more > 0 {
		s += fmt.Sprintf(textAndMore, more)
	}
	return fmt.Sprintf(textItHolds, s)
}

// foldName returns the entry of listing equal to name under Unicode case folding, else name.
func foldName(listing []fs.DirEntry, name string) string {
	for _, e := range listing {
		if e.Name() == name {
			return name
		}
	}
	for _, e := range listing {
		if strings.EqualFold(e.Name(), name) {
			return e.Name()
		}
	}
	return name
}

// EnvDir returns the directory named by the granted variable name. An unset variable, or one holding a
// relative path (refused: never resolved against the working directory), is recorded in resp.
func (e Env) EnvDir(resp *Response, name string) (string, bool) {
	v := e.Lookupenv(name)
	switch {
	case v == "":
		resp.Tried = append(resp.Tried, Attempt{Path: "$" + name, Reason: textNotSet})
		return "", false
	case !path.IsAbs(v):
		resp.Tried = append(resp.Tried, Attempt{Path: v, Reason: fmt.Sprintf(textRelativeEnvDir, name)})
		return "", false
	}
	return path.Clean(v), true
}

// Log writes a line to the host's trace (explain shows it).
func (e Env) Log(format string, args ...any) { e.logf(format, args...) }
