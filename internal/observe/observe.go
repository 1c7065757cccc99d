// Package observe records what a search looked at — every path it stat'ed or listed, inside a sandbox
// root or on the host, and every environment variable it read — and later tells whether all of it is
// still as it was. A search is a pure function of what it observed, so an unchanged record means an
// unchanged answer: this is what makes the result cache exact.
package observe

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// What kinds of observation there are.
const (
	Stat = "stat" // a path's type, mode, size, mtime and inode, or its absence
	Dir  = "dir"  // a directory's entry names
	Env  = "env"  // an environment variable's value
)

// Observation is one thing a search saw.
type Observation struct {
	Root string `json:"root,omitempty"` // the confined root Path is relative to; "" for a host path or a variable
	Path string `json:"path"`           // a path, or a variable's name
	What string `json:"what"`
	Seen string `json:"seen"`
}

// Recorder collects observations; the first of each (root, path, what) counts. Safe for concurrent use.
type Recorder struct {
	mu       sync.Mutex
	seen     map[string]bool
	list     []Observation
	volatile bool
}

// MarkVolatile says the search also depended on something no observation can re-check (what a
// child process's loader did): its answer must not be kept.
func (r *Recorder) MarkVolatile() {
	if r != nil {
		r.mu.Lock()
		r.volatile = true
		r.mu.Unlock()
	}
}

// Volatile reports whether MarkVolatile was called.
func (r *Recorder) Volatile() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.volatile
}

// Add records o unless the same thing was observed before.
func (r *Recorder) Add(o Observation) {
	if r == nil {
		return
	}
	k := o.Root + "\x00" + o.Path + "\x00" + o.What
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if !r.seen[k] {
		r.seen[k] = true
		r.list = append(r.list, o)
	}
}

// AddAll records every observation of list.
func (r *Recorder) AddAll(list []Observation) {
	for _, o := range list {
		r.Add(o)
	}
}

// List returns what was recorded, in order.
func (r *Recorder) List() []Observation {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// Getenv returns getenv that records every variable it reads.
func (r *Recorder) Getenv(getenv func(string) string) func(string) string {
	return func(name string) string {
		v := getenv(name)
		r.Add(Observation{Path: name, What: Env, Seen: v})
		return v
	}
}

// Stat stats a host path and records what it saw.
func (r *Recorder) Stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	r.Add(Observation{Path: path, What: Stat, Seen: StatSeen(fi, err)})
	return fi, err
}

// ReadDir lists a host directory and records its listing (or its absence).
func (r *Recorder) ReadDir(dir string) ([]fs.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	r.Add(Observation{Path: dir, What: Dir, Seen: DirSeen(names(entries), err)})
	return entries, err
}

// StatSeen encodes what a stat saw: absent, an error, or type, mode, size, mtime and inode.
func StatSeen(fi fs.FileInfo, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "absent"
	case err != nil:
		return "error: " + Cause(err).Error()
	}
	return statString(fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), inode(fi))
}

// statString is a stat's "mode size mtime inode", as fmt's "%v %d %d %d" without its cost: it is made
// for every re-check.
func statString(mode fs.FileMode, size, mtime int64, ino uint64) string {
	b := make([]byte, 0, 80)
	b = append(b, mode.String()...)
	b = strconv.AppendInt(append(b, ' '), size, 10)
	b = strconv.AppendInt(append(b, ' '), mtime, 10)
	b = strconv.AppendUint(append(b, ' '), ino, 10)
	return string(b)
}

// DirSeen encodes a directory listing by its sorted entry names.
func DirSeen(names []string, err error) string {
	if err != nil {
		return StatSeen(nil, err)
	}
	names = slices.Clone(names)
	slices.Sort(names)
	sum := sha256.Sum256([]byte(strings.Join(names, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// Cause is the error under a *fs.PathError, or err itself: for a message that names the path
// already.
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Check tells whether every observation still holds: it re-stats, re-lists and re-reads each one.
// It returns "" when all hold, else what changed first. getenv reads variables; a root is opened
// with os.OpenRoot, so a confined observation is re-made with the same confinement, by seeIn: the
// file system that made it (sandboxfs.See), whose links this package does not follow.
func Check(list []Observation, getenv func(string) string, seeIn func(*os.Root, Observation) string) string {
	c := checker{roots: map[string]*os.Root{}}
	defer c.close()
	for _, o := range list {
		var now string
		switch {
		case o.What == Env:
			now = getenv(o.Path)
		case o.Root == "":
			now = seeHost(o)
		default:
			if seen, ok := c.statInDir(o); ok {
				now = seen
				break
			}
			r, ok := c.roots[o.Root]
			if !ok {
				r, _ = os.OpenRoot(o.Root)
				c.roots[o.Root] = r
			}
			if r == nil {
				now = "root gone"
			} else {
				now = seeIn(r, o)
			}
		}
		if now != o.Seen {
			where := o.Path
			if o.Root != "" {
				where = o.Root + "/" + o.Path
			}
			return fmt.Sprintf("%s %s changed", o.What, where)
		}
	}
	return ""
}

// checker holds what one Check opened: the roots, and the directories statInDir stats in.
type checker struct {
	roots map[string]*os.Root
	dirs  map[[2]string]dirFD // by root and directory
}

// dirFD is a directory opened by statInDir's walk: its descriptor, or why there is none.
type dirFD struct {
	fd      int
	absent  bool // the walk met a missing directory: everything under it is absent
	decline bool // the walk met something r.Stat must judge (a symlink, an error)
}

func (c *checker) close() {
	for _, r := range c.roots {
		if r != nil {
			r.Close()
		}
	}
	c.closeDirs()
}

func seeHost(o Observation) string {
	if o.What == Dir {
		entries, err := os.ReadDir(o.Path)
		return DirSeen(names(entries), err)
	}
	fi, err := os.Stat(o.Path)
	return StatSeen(fi, err)
}

func names(entries []fs.DirEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name()
	}
	return out
}
