package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
)

func TestPluginFile_Errors(t *testing.T) {
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	module := []byte("\x00asm\x01\x00\x00\x00")
	tests := []struct {
		name   string
		config string // $DIR is the config file's directory
		setup  func(t *testing.T, dir string)
		want   string // "" for no error; $DIR is replaced
	}{
		{"a relative source is relative to the config file's directory",
			"[plugin.site]\nsource = \"plugins/site.wasm\"\n",
			func(t *testing.T, dir string) { filetree.PutMode(t, dir, "plugins/site.wasm", module, 0o644) },
			""},
		{"a missing file, with where it is set and which orders name it",
			"[plugin.site]\nsource = \"site.wasm\"\n[library.cudart]\norder = [\"site\", \"wheels\"]\n",
			nil,
			`config $DIR/p.toml:2:1: plugin "site": $DIR/site.wasm: no such file or directory (named in library.cudart.order)`},
		{"a directory",
			"[plugin.site]\nsource = \"site.wasm\"\n",
			func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "site.wasm"), 0o755) },
			`$DIR/site.wasm is not a regular file`},
		{"writable by others",
			"[plugin.site]\nsource = \"site.wasm\"\n",
			func(t *testing.T, dir string) { filetree.PutMode(t, dir, "site.wasm", module, 0o666) },
			`$DIR/site.wasm is writable by others than its owner (mode 0666): refused; run chmod go-w on it, or set allow_writable = true in [plugin.site]`},
		{"writable by others, allowed",
			"[plugin.site]\nsource = \"site.wasm\"\nallow_writable = true\n",
			func(t *testing.T, dir string) { filetree.PutMode(t, dir, "site.wasm", module, 0o666) },
			""},
		{"in a directory others can write",
			"[plugin.site]\nsource = \"d/site.wasm\"\n",
			func(t *testing.T, dir string) {
				filetree.PutMode(t, dir, "d/site.wasm", module, 0o644)
				os.Chmod(filepath.Join(dir, "d"), 0o777)
			},
			`$DIR/d/site.wasm: directory $DIR/d is writable by others than its owner (mode 0777), so another user could replace it: refused`},
		{"reached through a symlink in a directory others can write",
			"[plugin.site]\nsource = \"w/site.wasm\"\n",
			func(t *testing.T, dir string) {
				filetree.PutMode(t, dir, "private/site.wasm", module, 0o644)
				filetree.Mkdir(t, dir, "w", 0o777)
				filetree.Symlink(t, "../private/site.wasm", filepath.Join(dir, "w/site.wasm"))
			},
			`directory $DIR/w is writable by others than its owner (mode 0777), so another user could replace it: refused`},
		{"below an ancestor others can write",
			"[plugin.site]\nsource = \"a/b/site.wasm\"\n",
			func(t *testing.T, dir string) {
				filetree.PutMode(t, dir, "a/b/site.wasm", module, 0o644)
				os.Chmod(filepath.Join(dir, "a"), 0o777)
			},
			`directory $DIR/a is writable by others than its owner (mode 0777), so another user could replace it: refused`},
		{"a symlink to a file below an ancestor others can write",
			"[plugin.site]\nsource = \"link.wasm\"\n",
			func(t *testing.T, dir string) {
				filetree.PutMode(t, dir, "a/b/site.wasm", module, 0o644)
				os.Chmod(filepath.Join(dir, "a"), 0o770) // writable by its group, one others are in
				os.Chown(filepath.Join(dir, "a"), -1, 100)
				filetree.Symlink(t, filepath.Join(dir, "a/b/site.wasm"), filepath.Join(dir, "link.wasm"))
			},
			`directory $DIR/a is writable by others than its owner (mode 0770)`},
		{"in a directory another user owns",
			"[plugin.site]\nsource = \"theirs/site.wasm\"\n",
			func(t *testing.T, dir string) {
				filetree.PutMode(t, dir, "theirs/site.wasm", module, 0o644)
				if err := os.Chown(filepath.Join(dir, "theirs"), 65534, 65534); err != nil {
					t.Skipf("needs root to give a directory to nobody: %v", err)
				}
			},
			`$DIR/theirs is owned by uid 65534, neither this user nor root, so another user could replace it: refused`},
		{"in a directory others can write, pinned: its hash is checked on every load instead",
			"[plugin.site]\nsource = \"d/site.wasm\"\nsha256 = \"" + sum(module) + "\"\n",
			func(t *testing.T, dir string) {
				filetree.PutMode(t, dir, "d/site.wasm", module, 0o644)
				os.Chmod(filepath.Join(dir, "d"), 0o777)
			},
			""},
		{"a sticky directory others can write is fine (as /tmp)",
			"[plugin.site]\nsource = \"d/site.wasm\"\n",
			func(t *testing.T, dir string) {
				filetree.PutMode(t, dir, "d/site.wasm", module, 0o644)
				os.Chmod(filepath.Join(dir, "d"), 0o777|os.ModeSticky)
			},
			""},
		{"a pin that matches",
			"[plugin.site]\nsource = \"site.wasm\"\nsha256 = \"" + strings.ToUpper(sum(module)) + "\"\n",
			func(t *testing.T, dir string) { filetree.PutMode(t, dir, "site.wasm", module, 0o644) },
			""},
		{"a pin that does not match, at the pin's position",
			"[plugin.site]\nsource = \"site.wasm\"\n\nsha256 = \"" + sum([]byte("other")) + "\"\n[search]\norder = [\"site\"]\n",
			func(t *testing.T, dir string) { filetree.PutMode(t, dir, "site.wasm", module, 0o644) },
			`config $DIR/p.toml:4:1: plugin "site": $DIR/site.wasm has sha256 ` + sum(module) + `, not the pinned ` + sum([]byte("other")) + `: refused (a changed plugin needs a new pin) (named in search.order)`},
		{"a pin that is not hex past its eighth digit",
			"[plugin.site]\nsource = \"site.wasm\"\nsha256 = \"" + strings.Repeat("0", 20) + "zz" + strings.Repeat("0", 42) + "\"\n",
			func(t *testing.T, dir string) { filetree.Put(t, dir, "site.wasm", module) },
			`$DIR/p.toml:3:1: plugin "site": sha256 "` + strings.Repeat("0", 20) + "zz"},
		{"a pinned builtin that matches",
			"[plugin.wheels]\nsha256 = \"" + sum(builtin.StepsModule()) + "\"\n",
			nil, ""},
		{"a step order naming a plugin that is not there",
			"[library.cudart]\norder = [\"wheels\", \"optapps\"]\n",
			nil, `config $DIR/p.toml:2:1: library.cudart.order names unknown step "optapps"`},
		{"a library order for a library no pack defines",
			"[library.acmefft]\norder = [\"wheels\"]\n",
			nil, `config $DIR/p.toml:2:1: [library.acmefft] names an unknown library`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			config := filetree.Put(t, dir, "p.toml", []byte(tt.config))
			f, err := New(Options{ConfigFile: config, SystemConfigDir: t.TempDir(), LookupEnv: testEnv{"PATHFINDER_CACHE_DIR": t.TempDir()}.lookup})
			want := strings.ReplaceAll(tt.want, "$DIR", dir)
			switch {
			case want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case want == "":
				f.Close()
			case err == nil:
				f.Close()
				t.Fatalf("New succeeded; want an error containing %q", want)
			case !strings.Contains(err.Error(), want) || !errors.As(err, new(*ConfigError)) || strings.HasPrefix(err.Error(), "pathfinder: "):
				t.Fatalf("New: %v\nwant an error containing %q", err, want)
			}
		})
	}
}

// A pin is checked once per changed file: the next process reads what the last check saw.
func TestPluginFile_pinMemo(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	module := []byte("\x00asm\x01\x00\x00\x00")
	s := sha256.Sum256(module)
	wasm := filetree.PutMode(t, dir, "site.wasm", module, 0o644)
	config := filetree.Put(t, dir, "p.toml", []byte("[plugin.site]\nsource = \"site.wasm\"\nsha256 = \""+hex.EncodeToString(s[:])+"\"\n"))
	open := func() error {
		f, err := New(Options{ConfigFile: config, SystemConfigDir: t.TempDir(), LookupEnv: testEnv{"PATHFINDER_CACHE_DIR": cache}.lookup})
		if err == nil {
			f.Close()
		}
		return err
	}
	if err := open(); err != nil {
		t.Fatal(err)
	}
	if memos, _ := os.ReadDir(filepath.Join(cache, "pins")); len(memos) != 1 {
		t.Fatalf("pin memos %v", memos)
	}
	if err := open(); err != nil {
		t.Fatal(err)
	}
	// Rewritten in place, its size, inode and mtime kept: only the ctime, which no user can set,
	// tells, and the pin is the same error as without a memo (before, the memo let it pass).
	before, _ := os.Stat(wasm)
	f, _ := os.OpenFile(wasm, os.O_WRONLY, 0)
	f.WriteAt([]byte("\x02"), 4) // another wasm version: the same size
	f.Close()
	os.Chtimes(wasm, before.ModTime(), before.ModTime())
	if after, _ := os.Stat(wasm); after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		t.Fatal("the rewrite changed the size, the mtime or the inode")
	}
	if err := open(); err == nil || !strings.Contains(err.Error(), "not the pinned") {
		t.Fatalf("a file rewritten in place passed its pin: %v", err)
	}
	// Another module of another size: the memo no longer matches what a stat sees, so it is hashed.
	if err := os.WriteFile(wasm, append(module, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := open(); err == nil || !strings.Contains(err.Error(), "not the pinned") {
		t.Fatalf("a changed file passed its pin: %v", err)
	}
}

func TestFinder_Plugins_builtin(t *testing.T) {
	f := newFinder(t, nil, "[plugin.wheels]\nsha256 = \""+builtinHash()+"\"\n")
	plugins := f.Plugins(bg)
	names := []string{}
	for _, p := range plugins {
		names = append(names, p.Name)
		if p.SHA256 != builtinHash() || p.ABI != abi.Version || len(p.Problems) > 0 || p.Source != "builtin:"+p.Name {
			t.Errorf("%+v", p)
		}
		if len(p.Searches) != 1 || p.Searches[0] != p.Name {
			t.Errorf("%s: searches %v", p.Name, p.Searches)
		}
	}
	if !strings.Contains(strings.Join(names, " "), "canary conda envroots") || !plugins[len(plugins)-1].Pinned {
		t.Fatalf("plugins %v", names)
	}
	if w := plugins[len(plugins)-1]; w.Name != "wheels" || strings.Join(w.Read, ",") != "@site-packages" || w.Memory != "64MiB" || w.Timeout != "5s" || strings.Join(w.UsedIn, ",") != "search.order" {
		t.Fatalf("wheels %+v", w)
	}
}

func builtinHash() string {
	s := sha256.Sum256(builtin.StepsModule())
	return hex.EncodeToString(s[:])
}

func TestFinder_Settings(t *testing.T) {
	dir := t.TempDir()
	filetree.PutMode(t, dir, "site.wasm", []byte("\x00asm"), 0o644)
	user := t.TempDir()
	filetree.Put(t, user, "pathfinder/pathfinder.toml", []byte("[plugin.conda]\ntimeout = \"2s\"\n"))
	config := filetree.Put(t, dir, "site.toml", []byte("[plugin.site]\nsource = \"site.wasm\"\nread = [\"/opt/apps/cuda\"]\n\n[plugin.site.options]\nroot = \"/opt/apps/cuda\"\n\n[library.cudart]\norder = [\"site\", \"wheels\"]\n"))
	f := newFinderOpts(t, Options{ConfigFile: config, SystemConfigDir: t.TempDir(), LookupEnv: testEnv{"XDG_CONFIG_HOME": user}.lookup})
	got := map[string]inspect.Setting{}
	for _, s := range f.Settings() {
		got[s.Key] = s
	}
	userFile := filepath.Join(user, "pathfinder/pathfinder.toml")
	for key, want := range map[string]string{
		"plugin.site.source":         `"` + dir + `/site.wasm"  ` + config + ":2:1",
		"plugin.site.read":           `["/opt/apps/cuda"]  ` + config + ":3:1",
		"plugin.site.options":        `{ root = "/opt/apps/cuda" }  ` + config + ":5:1",
		"plugin.site.memory":         `"64MiB"  default`,
		"plugin.conda.timeout":       `"2s"  ` + userFile + ":2:1",
		"plugin.conda.memory":        `"64MiB"  builtin:pathfinder.toml:`,
		"library.cudart.order":       `["site", "wheels"]  ` + config + ":9:1",
		"search.order":               `["wheels", "conda",`,
		"plugin.site.allow_writable": `false  default`,
	} {
		s, ok := got[key]
		if line := s.TOML() + "  " + s.Origin; !ok || !strings.HasPrefix(line, want) {
			t.Errorf("%s = %s, want %s", key, line, want)
		}
	}
	out := inspect.FormatSettings(f.Settings())
	if !strings.Contains(out, "[plugin.site]\nsource = \""+dir+"/site.wasm\"") || !strings.Contains(out, "[search]\ncompatibility = \"strict\"") || !strings.Contains(out, "\norder = [") {
		t.Fatalf("formatted:\n%s", out)
	}
	// What pathfinder config prints is a config file: it reads back, strictly, to the same settings.
	back := filetree.Put(t, t.TempDir(), "effective.toml", []byte(out))
	g := newFinderOpts(t, Options{ConfigFile: back, SystemConfigDir: t.TempDir(), LookupEnv: testEnv{}.lookup})
	for _, s := range g.Settings() {
		if want, ok := got[s.Key]; !ok || want.TOML() != s.TOML() {
			t.Errorf("read back %s = %s, printed %s", s.Key, s.TOML(), want.TOML())
		}
	}
}
