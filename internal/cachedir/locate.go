package cachedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/trust"
)

// Location is where the caches are, or why they are off.
type Location struct {
	Dir      string // "" when off
	Off      string // why they are off; "" when on
	Disabled bool   // off on purpose: PATHFINDER_NO_CACHE=1 or [cache] enabled = false
}

// Locate says where the caches are, or why they are off, from the config's [cache] enabled and dir
// and the environment. Of the cache dir only its own last components are ever made: those of
// $PATHFINDER_CACHE_DIR and [cache] dir below a directory that exists, "pathfinder" in
// $XDG_CACHE_HOME, ".cache/pathfinder" in an existing $HOME (Debian's nobody has HOME=/nonexistent,
// which root must not make); and a missing $XDG_CACHE_HOME is made here (makeCacheHome). A dir
// others may write is a way to choose what find answers, and is not used (check).
func Locate(enabled bool, configured string, getenv func(string) string) Location {
	switch {
	case !enabled:
		return Location{Off: "[cache] enabled = false", Disabled: true}
	case getenv("PATHFINDER_NO_CACHE") == "1":
		return Location{Off: "PATHFINDER_NO_CACHE=1", Disabled: true}
	}
	dir, from := getenv("PATHFINDER_CACHE_DIR"), "$PATHFINDER_CACHE_DIR"
	if dir == "" {
		dir, from = configured, "[cache] dir"
	}
	anchor := filepath.Dir(dir)
	switch {
	case dir != "" && !filepath.IsAbs(dir):
		return Location{Off: fmt.Sprintf("%s %q is a relative path, and none is resolved against the working directory", from, dir)}
	case dir != "":
	case filepath.IsAbs(getenv("XDG_CACHE_HOME")):
		anchor = getenv("XDG_CACHE_HOME")
		dir, from = filepath.Join(anchor, "pathfinder"), "$XDG_CACHE_HOME"
		makeCacheHome(dir, getenv("HOME"))
	case filepath.IsAbs(getenv("HOME")):
		anchor = getenv("HOME")
		dir, from = filepath.Join(anchor, ".cache", "pathfinder"), "$HOME"
	default:
		return Location{Off: "neither $XDG_CACHE_HOME nor $HOME is an absolute path"}
	}
	if err := check(dir, anchor); err != nil {
		return Location{Off: fmt.Sprintf("%s (from %s): %v", dir, from, err)}
	}
	return Location{Dir: dir}
}

// makeCacheHome makes dir, "pathfinder" in $XDG_CACHE_HOME, when $XDG_CACHE_HOME is missing, with
// the directories above it that are missing, mode 0700, as the XDG Base Directory specification
// asks of a program that writes there; never $HOME, nor a directory inside a $HOME that is missing.
// Whatever it could not make, check says.
func makeCacheHome(dir, home string) {
	xdg := filepath.Dir(dir)
	if _, err := os.Stat(xdg); !os.IsNotExist(err) {
		return
	}
	if filepath.IsAbs(home) {
		if _, err := os.Stat(home); os.IsNotExist(err) && (xdg == home || strings.HasPrefix(xdg, strings.TrimSuffix(home, "/")+"/")) {
			return
		}
	}
	os.MkdirAll(dir, 0o700)
}

// check says why dir may not hold caches, nil when it may: it is a directory that no one but this
// user or root can change, nor any directory above it (trust.OthersCanChange), or it does not exist
// yet and anchor, the directory above it that must exist, does (what lies between is made 0755).
// Whoever can write a cache decides what is found and, for compiled code, what runs.
func check(dir, anchor string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return errors.New("not a directory")
	case err != nil && !os.IsNotExist(err):
		return errors.Unwrap(err)
	case err != nil:
		if fi, err := os.Stat(anchor); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s does not exist, and only the cache's own directories are made", anchor)
		}
	}
	if err := trust.OthersCanChange(dir); err != nil {
		return fmt.Errorf("not used: %v", err)
	}
	return nil
}
