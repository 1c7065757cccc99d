//go:build unix

package trust

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// writableByOthers reports whether anyone but fi's owner may write it: everyone, or a group that
// is not this user's alone.
func writableByOthers(fi fs.FileInfo) bool {
	mode := fi.Mode().Perm()
	return mode&0o002 != 0 || mode&0o020 != 0 && !privateGroup(fi)
}

// privateGroup reports whether the group of fi is this user's own and no one else's: a user private
// group (Debian's and Red Hat's default, with umask 002), whose group-write bit lets no other user
// in. It reads /etc/group and /etc/passwd; a group known only to a directory service counts as shared.
func privateGroup(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	gid, uid := strconv.Itoa(int(st.Gid)), strconv.Itoa(os.Geteuid())
	name, primary := "", ""
	for _, l := range lines(passwdFile) {
		if f := strings.Split(l, ":"); len(f) >= 4 && f[2] == uid {
			name, primary = f[0], f[3]
			break
		}
	}
	if name == "" || primary != gid {
		return false
	}
	for _, l := range lines(groupFile) {
		f := strings.Split(l, ":")
		if len(f) >= 4 && f[2] == gid && f[3] != "" && f[3] != name {
			return false // other members
		}
	}
	for _, l := range lines(passwdFile) {
		if f := strings.Split(l, ":"); len(f) >= 4 && f[3] == gid && f[2] != uid {
			return false // another user's primary group too
		}
	}
	return true
}

// The account files privateGroup reads; tests give their own.
var groupFile, passwdFile = "/etc/group", "/etc/passwd"

func lines(p string) []string {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return strings.Split(string(b), "\n")
}
