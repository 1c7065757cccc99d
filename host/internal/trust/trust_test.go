//go:build unix

package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to another user")
	}
	const nobody = 65534
	base := t.TempDir() // under the sticky /tmp, owned by this user
	mk := func(rel string, mode os.FileMode) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := func(dir string) string {
		p := filepath.Join(dir, "libx.so.1")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	safe := file(mk("safe/lib", 0o755))
	groupWritable := file(mk("shared/lib", 0o775))
	mk("sticky", 0o777|os.ModeSticky)
	ownInSticky := file(mk("sticky/mine", 0o755))
	// Another user's file in a sticky directory: they may replace it.
	theirs := filepath.Join(base, "sticky", "libtheirs.so.1")
	os.WriteFile(theirs, nil, 0o644)
	if err := os.Chown(theirs, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	owned := mk("owned", 0o755)
	os.Chown(owned, nobody, nobody)
	ownedFile := file(owned)
	link := filepath.Join(mk("links", 0o755), "lib")
	os.Symlink(filepath.Dir(groupWritable), link)

	cases := []struct {
		name, path, err string
	}{
		{"every directory private", safe, ""},
		{"a directory others may write", groupWritable, "shared/lib is writable by others than its owner (mode 0775)"},
		{"own entry in a sticky directory", ownInSticky, ""},
		{"another user's entry in a sticky directory", theirs, "libtheirs.so.1 is in"},
		{"a directory of another user", ownedFile, "owned is owned by uid 65534"},
		{"a private symlink to a directory others may write", filepath.Join(link, "libx.so.1"), "shared/lib is writable by others"},
		{"relative", "lib/libx.so.1", "not an absolute path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Replaceable(c.path)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("Replaceable(%s) = %v; want nil", c.path, err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("Replaceable(%s) = %v; want an error saying %q", c.path, err, c.err)
			}
		})
	}
}
