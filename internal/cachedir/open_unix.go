//go:build unix

package cachedir

import (
	"os"
	"syscall"
)

// openFlags make an open that does not wait for a writer when a FIFO stands where a file should.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// A writer holds its temporary file or directory with an exclusive flock for as long as it has it
// open, so a temporary that no one holds was left by a writer that is gone: the kernel lets go of a
// killed process's locks. No clock is involved, so a slow writer is never taken for a dead one.

// holdTemp locks f, a temporary this process just made; false when another process removed it
// before the lock was taken (it took it for abandoned in between).
func holdTemp(f *os.File) bool {
	fd := int(f.Fd())
	if syscall.Flock(fd, syscall.LOCK_EX) != nil {
		return false
	}
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Nlink > 0
}

// closeBeforeRename closes a temporary file before its rename where a rename needs that; on Unix the
// file stays open, and locked, until after its rename.
func closeBeforeRename(*os.File) error { return nil }

// takeAbandoned locks the temporary at p when no writer holds it; release lets go of it. Anything
// that cannot be opened to be locked (a symlink, a FIFO no one writes) is no writer's and taken.
func takeAbandoned(p string) (release func(), ok bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|openFlags, 0)
	if err != nil {
		return func() {}, !os.IsNotExist(err)
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
