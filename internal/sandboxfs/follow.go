// Package sandboxfs is the file system a plugin sees: each granted directory through os.Root, so
// nothing is read outside it, and links that lead out followed as README's Security model says:
// what they lead to can be looked at, never read, and never in /proc, /sys or /dev. What a plugin
// looks at is recorded as observations (internal/observe).
package sandboxfs

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// Real installs are symlink forests: a uv venv made with --link-mode=symlink, Nix's symlinkJoin, a
// Spack view, Bazel runfiles, Debian's /usr/lib/cuda. Their links lead out of the directory a user
// names, where os.Root refuses to go. Through such a link a step sees what the link leads to as if
// it lay inside (whether it exists, its type, size and times, a directory's entry names), but never
// reads the bytes of a file reached that way, and no link reaches /proc, /sys or /dev.

// Reached is where a path inside a granted directory leads when every link on its way is followed.
type Reached struct {
	Path  string        // the host path it resolves to
	Links []search.Link // the links on the way, in order
	Out   bool          // a link led out of the granted directory: what lies there is seen, never read
}

// MaxLinks is how many links one path may pass through: Linux's MAXSYMLINKS.
const MaxLinks = 40

// Errors of a path followed through links.
var (
	ErrTooManyLinks = errors.New("more than 40 links on the way (a loop?)")
	ErrForbidden    = errors.New("leads into /proc, /sys or /dev, which no link reaches")
	// ErrReadThroughLink is why a step cannot read a file a link outside its directory leads to.
	ErrReadThroughLink = errors.New("reached through a link that leads out of the granted directory: it can be looked at, not read")
)

// forbidden reports whether the host path p is /proc, /sys or /dev or lies under one of them.
func forbidden(p string) bool {
	for _, f := range [...]string{"/proc", "/sys", "/dev"} {
		if p == f || strings.HasPrefix(p, f+"/") {
			return true
		}
	}
	return false
}

// String is how a path reached through links is told to a user: the first link, each place the
// links lead, and where that resolves to when the last link's text does not say it.
func (r Reached) String() string {
	var b strings.Builder
	for i, l := range r.Links {
		if i == 0 {
			b.WriteString(l.Path)
		}
		b.WriteString(" → " + l.Target)
	}
	if n := len(r.Links); n > 0 && r.Links[n-1].Target != r.Path {
		b.WriteString(" (" + r.Path + ")")
	}
	return b.String()
}

// suffix is what a Stat observation adds when links led out: each link and what it held, so that
// re-pointing one changes the observation even where the file it leads to looks the same.
func (r Reached) suffix() string {
	if !r.Out {
		return ""
	}
	var b strings.Builder
	for _, l := range r.Links {
		b.WriteString(" via " + l.Path + " -> " + l.Target)
	}
	return b.String()
}

// StatIn stats name, a slash-separated path inside the granted directory mount that r holds:
// confined, as os.Root does, and where a link on the way leads out of mount, through the link
// (Follow). seen is what an observation of it records.
func StatIn(r *os.Root, mount, name string) (fi fs.FileInfo, reached Reached, seen string, err error) {
	fi, err = r.Stat(name)
	if err != nil && followsLinks && !errors.Is(err, fs.ErrNotExist) {
		// os.Root refuses a link that leads out ("path escapes from parent"), and any other error it
		// meets the walk meets too, with its own words.
		fi, reached, err = Follow(mount, name)
	}
	return fi, reached, observe.StatSeen(fi, err) + reached.suffix(), err
}

// OpenReached opens name inside mount for reading, as OpenIn does (seen is what a stat just saw of
// it), and says where the walk that opened it went: the links it reports are those on the way to
// the very file opened, never a second walk's, which another user could have sent elsewhere. On
// Linux, where follow says mount is a host path links are followed from, that walk is Follow's;
// elsewhere os.Root's, which follows no link that leads out.
func OpenReached(r *os.Root, mount, name string, seen fs.FileInfo, follow bool) (*os.File, fs.FileInfo, Reached, error) {
	if !followsLinks || !follow {
		f, fi, err := OpenIn(r, name, seen)
		return f, fi, Reached{}, err
	}
	return OpenFollowed(mount, name)
}

// See makes the observation o of a path inside the granted directory r holds again, as a step
// made it: what observe.Check compares with what o saw.
func See(r *os.Root, o observe.Observation) string {
	if o.What == observe.Dir {
		return observe.DirSeen(readDirIn(r, o.Root, o.Path))
	}
	_, _, seen, _ := StatIn(r, o.Root, o.Path)
	return seen
}

// readDirIn lists the directory name inside mount as StatIn reaches it, opening it as OpenIn does:
// a directory swapped for a FIFO is refused, not waited on.
func readDirIn(r *os.Root, mount, name string) ([]string, error) {
	f, _, err := OpenIn(r, name, nil)
	if err != nil && followsLinks && !errors.Is(err, fs.ErrNotExist) {
		f, _, _, err = OpenFollowed(mount, name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
