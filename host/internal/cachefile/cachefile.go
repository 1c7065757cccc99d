// Package cachefile reads and writes the host's on-disk cache files so that none is ever trusted by
// accident: each file carries the sha256 of its contents and is replaced atomically, and a cache
// directory that others than its owner may write is not used at all, since whoever can write the
// cache decides what find answers.
package cachefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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

// readFile is os.ReadFile in three system calls for a small file: no fstat for the size, and a
// short read taken as the end (a file cut short fails its checksum, never passes as whole).
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 4<<10) // most entries are 1–2 KB
	n, err := f.Read(b)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if n < len(b) {
		return b[:n], nil
	}
	rest, err := io.ReadAll(f)
	return append(b, rest...), err
}

// Usable reports whether dir may hold caches: it does not exist yet (it will be made 0755), or it is
// a directory that only its owner, and that owner is this user or root, may write.
func Usable(dir string) bool {
	fi, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return true
	}
	return err == nil && fi.IsDir() && privateTo(fi)
}
