//go:build unix

package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestOthersCanReplace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to another user")
	}
	const nobody = 65534
	base := t.TempDir() // under the sticky /tmp, owned by this user
	file := func(dir string) string {
		p := filepath.Join(dir, "libx.so.1")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	safe := file(filetree.Mkdir(t, base, "safe/lib", 0o755))
	groupWritable := file(filetree.Mkdir(t, base, "shared/lib", 0o775))
	os.Chown(filepath.Dir(groupWritable), 0, 100) // a group others are in
	filetree.Mkdir(t, base, "sticky", 0o777|os.ModeSticky)
	ownInSticky := file(filetree.Mkdir(t, base, "sticky/mine", 0o755))
	// Another user's file in a sticky directory: they may replace it.
	theirs := filepath.Join(base, "sticky", "libtheirs.so.1")
	os.WriteFile(theirs, nil, 0o644)
	if err := os.Chown(theirs, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	owned := filetree.Mkdir(t, base, "owned", 0o755)
	os.Chown(owned, nobody, nobody)
	ownedFile := file(owned)
	link := filepath.Join(filetree.Mkdir(t, base, "links", 0o755), "lib")
	os.Symlink(filepath.Dir(groupWritable), link)

	cases := []struct {
		name, path, err string
	}{
		{"every directory private", safe, ""},
		{"a directory others may write", groupWritable, "shared/lib is writable by others than its owner (mode 0775)"},
		{"own entry in a sticky directory", ownInSticky, ""},
		{"another user's entry in a sticky directory", theirs, "libtheirs.so.1 is owned by uid 65534"},
		{"a directory of another user", ownedFile, "owned is owned by uid 65534"},
		{"a private symlink to a directory others may write", filepath.Join(link, "libx.so.1"), "shared/lib is writable by others"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := OthersCanReplace(c.path)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("OthersCanReplace(%s) = %v; want nil", c.path, err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("OthersCanReplace(%s) = %v; want an error saying %q", c.path, err, c.err)
			}
		})
	}
}

// TestReplaceable_userPrivateGroup: a group-writable directory whose group is this user's own and no
// one else's (a user private group, umask 002) lets no one else in; any other group does.
func TestOthersCanReplace_userPrivateGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory a group")
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "venv", "lib")
	os.MkdirAll(lib, 0o775)
	os.Chmod(lib, 0o775)
	os.Chown(lib, 0, 4242)
	p := filepath.Join(lib, "libx.so.1")
	os.WriteFile(p, nil, 0o644)
	accounts := func(group, passwd string) {
		groupFile, passwdFile = filepath.Join(dir, "group"), filepath.Join(dir, "passwd")
		os.WriteFile(groupFile, []byte(group), 0o644)
		os.WriteFile(passwdFile, []byte(passwd), 0o644)
	}
	t.Cleanup(func() { groupFile, passwdFile = "/etc/group", "/etc/passwd" })
	for _, tt := range []struct {
		name, group, passwd string
		private             bool
	}{
		{"the user's own group", "me:x:4242:\n", "me:x:0:4242::/root:/bin/sh\n", true},
		{"the user's own group, listing the user", "me:x:4242:me\n", "me:x:0:4242::/root:/bin/sh\n", true},
		{"another member", "me:x:4242:me,bob\n", "me:x:0:4242::/root:/bin/sh\n", false},
		{"another user's primary group too", "me:x:4242:\n", "me:x:0:4242::/root:/bin/sh\nbob:x:1001:4242::/home/bob:/bin/sh\n", false},
		{"not the user's primary group", "staff:x:4242:\n", "me:x:0:0::/root:/bin/sh\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			accounts(tt.group, tt.passwd)
			if err := OthersCanReplace(p); (err == nil) != tt.private {
				t.Fatalf("OthersCanReplace = %v; want private %v", err, tt.private)
			}
		})
	}
}

func TestOthersCanChange(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string // "" for trusted; $DIR is the test's directory
	}{
		{"private", func(t *testing.T, dir string) string { return filetree.Mkdir(t, dir, "a/b", 0o755) }, ""},
		{"missing below private", func(t *testing.T, dir string) string { return filepath.Join(dir, "x/y/z") }, ""},
		{"itself writable by others", func(t *testing.T, dir string) string { return filetree.Mkdir(t, dir, "a", 0o777) },
			"directory $DIR/a is writable by others than its owner (mode 0777)"},
		{"a file writable by its group", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "f")
			os.WriteFile(p, nil, 0o664)
			os.Chmod(p, 0o664)
			os.Chown(p, 0, 100) // a group others are in
			return p
		}, "file $DIR/f is writable by others than its owner (mode 0664)"},
		{"sticky", func(t *testing.T, dir string) string {
			filetree.Mkdir(t, dir, "tmp", 0o777|os.ModeSticky)
			return filetree.Mkdir(t, dir, "tmp/mine", 0o700)
		}, ""},
		{"sticky, but another user's entry", func(t *testing.T, dir string) string {
			filetree.Mkdir(t, dir, "tmp", 0o777|os.ModeSticky)
			p := filetree.Mkdir(t, dir, "tmp/theirs", 0o755)
			os.Chown(p, 65534, 65534)
			return filepath.Join(p, "f")
		}, "$DIR/tmp/theirs is owned by uid 65534, neither this user nor root"},
		{"dot-dot through a symlink is resolved as the kernel does", func(t *testing.T, dir string) string {
			filetree.Mkdir(t, dir, "w/sub", 0o755)
			os.Chmod(filepath.Join(dir, "w"), 0o777)
			os.Symlink(filepath.Join(dir, "w/sub"), filepath.Join(dir, "link"))
			return dir + "/link/../x" // $DIR/w/x, in the directory others can write (not $DIR/x, as Clean would say)
		}, "directory $DIR/w is writable by others than its owner (mode 0777)"},
		{"a symlink loop", func(t *testing.T, dir string) string {
			os.Symlink("loop", filepath.Join(dir, "loop"))
			return filepath.Join(dir, "loop/x")
		}, "too many levels of symbolic links"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			got := ""
			if err := OthersCanChange(tt.setup(t, dir)); err != nil {
				got = err.Error()
			}
			want := strings.ReplaceAll(tt.want, "$DIR", dir)
			if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
				t.Fatalf("OthersCanChange = %q, want %q", got, want)
			}
		})
	}
}
