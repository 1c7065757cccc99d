package cachedir

import (
	"fmt"
	"os"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// PinMemo remembers that a pinned plugin file matched its pin, with what a stat of the file saw: a
// later process re-hashes only a file that changed since. It saves an early check only: the bytes a
// module is loaded from are hashed, always.
type PinMemo struct {
	path string // "" when nothing is remembered: the cache is off, or the plugin is no file
	seen string // the pin and the stat the memo holds when it holds
}

// Pin is the memo under base ("" for none) of the check of file ("" for none) against pin.
func Pin(base, file, pin string) PinMemo {
	if base == "" || file == "" {
		return PinMemo{}
	}
	fi, err := os.Stat(file)
	seen := pin + " " + observe.StatSeen(fi, err)
	if err == nil { // a rewrite in place keeps size, inode and mtime, never the ctime
		seen += fmt.Sprintf(" ctime %d", observe.ChangeTime(fi))
	}
	return PinMemo{path: pinFile(base, file), seen: seen + "\n"}
}

// Holds reports whether the file matched the pin when it was as it is now.
func (m PinMemo) Holds() bool {
	if m.path == "" {
		return false
	}
	b, ok := Read(m.path)
	return ok && string(b) == m.seen
}

// Remember records that the file, as it is now, matches the pin.
func (m PinMemo) Remember() {
	if m.path != "" {
		Write(m.path, []byte(m.seen))
	}
}
