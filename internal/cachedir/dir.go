package cachedir

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/pathfinder-dev/pathfinder/internal/trust"
)

// A checksummed directory appears whole or not at all, for a reader that trusts what it holds (wazero
// runs the native code of its compilation cache): NewDir has it written into a temporary directory
// beside it, then puts the checksum of what was written there in it (SumFile) and renames it into
// place; when another process put it there first, theirs is kept. It is used only when DirWhole:
// it matches the checksum it holds and holds only regular files and directories that this user or
// root owns and no one else may write; otherwise the next NewDir moves it aside and removes it. A use
// writes nothing. The checksum guards against corruption and mix-ups, not against this user:
// whoever can write the cache can write the user's shell startup files too. (Hashing costs well
// under a millisecond for the builtin module's compiled code, ~190 KB, a few for a Go plugin's
// ~15 MB.)

// DirWhole reports whether dir is a checksummed directory, whole.
func DirWhole(dir string) bool {
	want, ok := Read(SumFile(dir))
	return ok && string(want) == dirSum(dir)
}

// NewDir makes a temporary directory in which to write the checksummed directory dir, once what
// stands at dir (of which DirWhole was false) is moved aside and removed. finish ends the write: it
// puts the temporary directory in dir's place when keep is true, and removes it otherwise; its error
// is what writing the checksum met.
func NewDir(dir string) (tmp string, finish func(keep bool) error, err error) {
	parent := filepath.Dir(dir)
	if _, err := os.Lstat(dir); err == nil {
		if aside, release, err := tempDir(parent); err == nil {
			if os.Rename(dir, filepath.Join(aside, "old")) == nil {
				os.RemoveAll(aside)
			}
			release()
		}
	}
	tmp, release, err := tempDir(parent)
	if err != nil {
		return "", nil, err
	}
	return tmp, func(keep bool) error {
		defer release()
		var err error
		if keep {
			err = Write(SumFile(tmp), []byte(dirSum(tmp)))
			if err == nil && os.Rename(tmp, dir) == nil {
				return nil
			}
			// Another process put it there first, or something stands there: keep what is there.
		}
		os.RemoveAll(tmp)
		return err
	}, nil
}

// dirSum hashes the names and contents of every regular file under dir; "" when there is none, and
// "untrusted" when dir holds anything else (a symlink a reader would follow) or a file others than
// this user or root could have written.
func dirSum(dir string) string {
	var files []string
	trusted, sum := true, SumFile(dir)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		switch {
		case err != nil:
			trusted = false
		case d.IsDir():
			trusted = trusted && trust.Private(fi)
		case p == sum:
			trusted = trusted && trust.Private(fi) && d.Type().IsRegular()
		case d.Type().IsRegular():
			trusted = trusted && trust.Private(fi)
			files = append(files, p)
		default:
			trusted = false
		}
		return nil
	})
	if !trusted {
		return "untrusted"
	}
	if len(files) == 0 {
		return ""
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00"))
		f, err := os.Open(p)
		if err != nil {
			return "unreadable"
		}
		io.Copy(h, f)
		f.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}
