package cachedir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Write stores data at path behind its checksum, through a temporary file and a rename, so a reader
// never sees half a file and two writers never mix theirs. What stands at path and is no regular
// file (a directory, a FIFO) is removed first: path is inside the cache dir, whose entries are this
// package's. Temporary files in path's directory that their writer abandoned (killed between its
// write and its rename) are removed. A failure only costs the next process some work; it is
// returned for callers that tell the user of a cache that cannot be written.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	removeAbandoned(dir)
	tmp, err := createTemp(dir)
	if err != nil {
		return err
	}
	defer tmp.Close() // after the rename: closing it lets go of the lock that keeps it ours
	sum := sha256.Sum256(data)
	_, err = tmp.WriteString(hex.EncodeToString(sum[:]) + "\n")
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = closeBeforeRename(tmp)
	}
	if err == nil {
		err = replace(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// replace renames tmp to path. A rename cannot replace a directory: one that stands at path is
// removed, with what it holds, and the rename tried again.
func replace(tmp, path string) error {
	err := os.Rename(tmp, path)
	if fi, lerr := os.Lstat(path); err != nil && lerr == nil && !fi.Mode().IsRegular() {
		if err = os.RemoveAll(path); err == nil {
			err = os.Rename(tmp, path)
		}
	}
	return err
}

// createTemp makes a temporary file in dir and holds it (holdTemp): until it is closed, no other
// process takes it for abandoned.
func createTemp(dir string) (*os.File, error) {
	for range 3 {
		f, err := os.CreateTemp(dir, tempPrefix+"*")
		if err != nil {
			return nil, err
		}
		if holdTemp(f) {
			return f, nil
		}
		f.Close() // another process removed it before it was held: make another
	}
	return nil, errors.New("cannot keep a temporary file in " + dir)
}

// tempDir makes a temporary directory in parent and holds it as createTemp holds a file; release
// lets go of it (remove it or rename it first).
func tempDir(parent string) (dir string, release func(), err error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nil, err
	}
	removeAbandoned(parent)
	for range 3 {
		dir, err := os.MkdirTemp(parent, tempPrefix+"*")
		if err != nil {
			return "", nil, err
		}
		f, err := os.Open(dir)
		if err != nil {
			os.Remove(dir)
			return "", nil, err
		}
		if holdTemp(f) {
			return dir, func() { f.Close() }, nil
		}
		f.Close()
	}
	return "", nil, errors.New("cannot keep a temporary directory in " + parent)
}

// removeAbandoned removes the temporary files and directories in dir whose writer is gone: a
// process killed between its write and its rename. One a live writer holds is left alone.
func removeAbandoned(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			p := filepath.Join(dir, e.Name())
			if release, ok := takeAbandoned(p); ok {
				os.RemoveAll(p)
				release()
			}
		}
	}
}

// Read returns what Write stored at path, or false when the file is missing, truncated, corrupt or
// was not written by Write.
func Read(path string) ([]byte, bool) {
	b, err := readFile(path)
	if err != nil {
		return nil, false
	}
	head, data, ok := bytes.Cut(b, []byte("\n"))
	if !ok || len(head) != 64 {
		return nil, false
	}
	sum := sha256.Sum256(data)
	if string(head) != hex.EncodeToString(sum[:]) {
		return nil, false
	}
	return data, true
}

// maxFile bounds what Read reads: no cache file is near it.
const maxFile = 64 << 20

// readFile is os.ReadFile for a small file: a short read is taken as the end (a file cut short fails
// its checksum, never passes as whole). Only a regular file is read, and at most maxFile of it: the
// open does not wait for a writer, and a FIFO or a device is refused before any read waits on it.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b := make([]byte, 4<<10) // most entries are 1–2 KB
	n, err := f.Read(b)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if n < len(b) {
		return b[:n], nil
	}
	rest, err := io.ReadAll(io.LimitReader(f, maxFile))
	return append(b, rest...), err
}

// FirstError keeps the first error writing a cache met: a cache that cannot be written costs every
// process a search, and the pathfinder command's doctor says why. The zero value is ready; it is
// safe for concurrent use.
type FirstError struct {
	mu  sync.Mutex
	err error
}

// Note keeps err when it is the first; nil is nothing.
func (f *FirstError) Note(err error) {
	if err != nil {
		f.mu.Lock()
		if f.err == nil {
			f.err = err
		}
		f.mu.Unlock()
	}
}

// Err is the first error noted, nil when none was.
func (f *FirstError) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
