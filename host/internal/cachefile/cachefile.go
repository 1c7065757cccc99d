// Package cachefile reads and writes the host's on-disk cache files so that none is ever trusted by
// accident: each file carries the sha256 of its contents and is replaced atomically, and a cache
// directory that others than its owner may write is not used at all, since whoever can write the
// cache decides what find answers.
package cachefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/pathfinder-dev/pathfinder/host/internal/trust"
	"io"
	"os"
	"path/filepath"
)

// Write stores data at path behind its checksum, through a temporary file and a rename, so a reader
// never sees half a file and two writers never mix theirs. A failure only costs the next process
// some work, so it is not reported.
func Write(path string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return
	}
	sum := sha256.Sum256(data)
	_, werr := tmp.WriteString(hex.EncodeToString(sum[:]) + "\n")
	if werr == nil {
		_, werr = tmp.Write(data)
	}
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
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

// Usable reports whether dir may hold caches: it does not exist yet (it will be made 0755), or it is
// a directory that no one but this user or root can change, nor any directory above it
// (trust.OthersCanChange). Whoever can write a cache decides what is found and, for compiled code,
// what runs.
func Usable(dir string) bool {
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() || err != nil && !os.IsNotExist(err) {
		return false
	}
	return trust.OthersCanChange(dir) == nil
}
