package loadermodel

import (
	"debug/elf"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakeelf"
)

// resolveTree is a file tree seen through Loader.Root, as a mounted image would be.
func resolveTree(t *testing.T) (root string, multiarch string) {
	t.Helper()
	tg, err := findTarget(elf.EM_NONE, elf.ELFCLASSNONE)
	if err != nil {
		t.Skip(err)
	}
	multiarch = "/usr/lib/" + tg.triplet
	root = t.TempDir()
	tree(t, root, map[string]string{
		"opt/a/libfoo.so.1":     "lib:libfoo.so.1",
		"opt/b/libfoo.so.1":     "lib:libfoo.so.1",
		"opt/w32/libfoo.so.1":   "lib32:libfoo.so.1",
		"opt/arm/libfoo.so.1":   string(fakeelf.Header(elf.ELFCLASS64, elf.EM_AARCH64, elf.ET_DYN)),
		"opt/x86/libfoo.so.1":   string(fakeelf.Header(elf.ELFCLASS64, elf.EM_X86_64, elf.ET_DYN)),
		"opt/text/libfoo.so.1":  "this is a linker script, not an ELF file; the loader stops at it: " + strings.Repeat(".", 64),
		"opt/short/libfoo.so.1": "tiny",
		"opt/rel/libfoo.so.1":   string(fakeelf.Header(elf.ELFCLASS64, hostMachine(), elf.ET_REL)),
		"opt/dir/libfoo.so.1":   "dir",

		"opt/hw/glibc-hwcaps/x86-64-v3/libfoo.so.1": "lib:libfoo.so.1",
		"opt/hw/libfoo.so.1":                        "lib:libfoo.so.1",

		"opt/cached/libcached.so.1": "lib:libcached.so.1",
		"opt/cached/libswap.so.1":   "lib:libswap.so.1",
		"opt/cached/libqux.so.3":    "lib32:libqux.so.3",
	})
	good := ldconfig(t, root, "new", "/opt/cached")
	// Written after the cache, as ldconfig also lists the default directories (here, the
	// multiarch one): these are found in the default directories, not in the cache.
	tree(t, root, map[string]string{
		"opt/abs/libabs.so.1": "-> " + multiarch + "/libdef.so.1",

		strings.TrimPrefix(multiarch, "/") + "/libdef.so.1":     "lib:libdef.so.1",
		strings.TrimPrefix(multiarch, "/") + "/libcached.so.1":  "lib:libcached.so.1",
		strings.TrimPrefix(multiarch, "/") + "/libswap.so.1":    "lib:libswap.so.1",
		strings.TrimPrefix(multiarch, "/") + "/libsym.so.1":     "-> libsym.so.1.2.3",
		strings.TrimPrefix(multiarch, "/") + "/libsym.so.1.2.3": "lib:libsym.so.1",
		strings.TrimPrefix(multiarch, "/") + "/libnotelf.so.1":  "not an ELF file " + strings.Repeat("-", 64),
		strings.TrimPrefix(multiarch, "/") + "/libfoo.so.1":     "lib:libfoo.so.1",
		strings.TrimPrefix(multiarch, "/") + "/libqux.so.3":     "lib32:libqux.so.3",
		strings.TrimPrefix(multiarch, "/") + "/libfoo-arm.so.1": string(fakeelf.Header(elf.ELFCLASS64, elf.EM_AARCH64, elf.ET_DYN)),
	})
	// After the cache was written, libswap.so.1 becomes 32-bit: the cache now points at a file of
	// the wrong class, and the loader goes on to the default directories.
	copyFile(t, builtLib(t, "libswap.so.1", true), filepath.Join(root, "opt/cached/libswap.so.1"))
	tree(t, root, map[string]string{
		"etc/empty.cache":     "",
		"etc/magic.cache":     "glibc-ld.so.cache9.9 is not a format anyone knows",
		"etc/truncated.cache": string(good[:100]),
	})
	return root, multiarch
}

func TestLoader_Resolve(t *testing.T) {
	if testing.Short() {
		t.Skip("runs gcc and ldconfig")
	}
	root, ma := resolveTree(t)
	tests := []struct {
		name      string
		soname    string
		llp       string
		cache     string
		subdirs   []string // nil: none
		machine   elf.Machine
		wantPath  string
		wantReal  string // "" = wantPath
		wantVia   string
		wantErr   error
		wantTried []string // substrings of "path: reason", in order
	}{
		{name: "LD_LIBRARY_PATH order", soname: "libfoo.so.1", llp: "/opt/a:/opt/b", wantPath: "/opt/a/libfoo.so.1", wantVia: ViaLDLibraryPath},
		{name: "semicolons separate too", soname: "libfoo.so.1", llp: "/nonexistent;/opt/b", wantPath: "/opt/b/libfoo.so.1", wantVia: ViaLDLibraryPath,
			wantTried: []string{"/nonexistent/libfoo.so.1: no such file"}},
		{name: "empty entries are the working directory, never searched", soname: "libfoo.so.1", llp: ":/opt/a::", wantPath: "/opt/a/libfoo.so.1", wantVia: ViaLDLibraryPath,
			wantTried: []string{": empty LD_LIBRARY_PATH entry"}},
		{name: "relative entries are refused", soname: "libfoo.so.1", llp: "opt/a:./opt/b:/opt/b", wantPath: "/opt/b/libfoo.so.1", wantVia: ViaLDLibraryPath,
			wantTried: []string{`opt/a: relative LD_LIBRARY_PATH entry "opt/a"`, `./opt/b: relative`}},
		{name: "dynamic string tokens are not guessed", soname: "libfoo.so.1", llp: "/opt/w32:${LIB}/x:/opt/b", wantErr: ErrUnmodeled,
			wantTried: []string{"/opt/w32/libfoo.so.1: wrong ELF class", "${LIB}/x: LD_LIBRARY_PATH entry with a dynamic string token"}},
		{name: "a dollar that is no token is a character", soname: "libfoo.so.1", llp: "/opt/$ORIGINAL:/opt/b", wantPath: "/opt/b/libfoo.so.1", wantVia: ViaLDLibraryPath,
			wantTried: []string{"/opt/$ORIGINAL/libfoo.so.1: no such file"}},
		{name: "trailing slashes and repeats", soname: "libfoo.so.1", llp: "/opt/w32//:/opt/w32:/opt/b/", wantPath: "/opt/b/libfoo.so.1", wantVia: ViaLDLibraryPath,
			wantTried: []string{"/opt/w32/libfoo.so.1: wrong ELF class: ELFCLASS32"}},
		{name: "a 32-bit library earlier in the path is skipped", soname: "libfoo.so.1", llp: "/opt/w32:/opt/a", wantPath: "/opt/a/libfoo.so.1", wantVia: ViaLDLibraryPath,
			wantTried: []string{"/opt/w32/libfoo.so.1: wrong ELF class: ELFCLASS32, this process is ELFCLASS64"}},
		{name: "another machine's library is skipped", soname: "libfoo.so.1", llp: "/opt/arm:/opt/a", wantPath: "/opt/a/libfoo.so.1", wantVia: ViaLDLibraryPath,
			wantTried: []string{"/opt/arm/libfoo.so.1: wrong machine: EM_AARCH64"}},
		{name: "a file that is not ELF stops the loader", soname: "libfoo.so.1", llp: "/opt/text:/opt/a", wantErr: ErrBadLibrary,
			wantTried: []string{"/opt/text/libfoo.so.1: invalid ELF header"}},
		{name: "a short file stops the loader", soname: "libfoo.so.1", llp: "/opt/short:/opt/a", wantErr: ErrBadLibrary,
			wantTried: []string{"/opt/short/libfoo.so.1: file too short (4 bytes"}},
		{name: "an object file stops the loader", soname: "libfoo.so.1", llp: "/opt/rel:/opt/a", wantErr: ErrBadLibrary,
			wantTried: []string{"/opt/rel/libfoo.so.1: only ET_DYN and ET_EXEC"}},
		{name: "a directory stops the loader", soname: "libfoo.so.1", llp: "/opt/dir:/opt/a", wantErr: ErrBadLibrary,
			wantTried: []string{"/opt/dir/libfoo.so.1: cannot read file data: is a directory"}},
		{name: "glibc-hwcaps subdirectory first", soname: "libfoo.so.1", llp: "/opt/hw", subdirs: []string{"glibc-hwcaps/x86-64-v4", "glibc-hwcaps/x86-64-v3"},
			wantPath: "/opt/hw/glibc-hwcaps/x86-64-v3/libfoo.so.1", wantVia: ViaLDLibraryPath},
		{name: "inactive glibc-hwcaps subdirectory ignored", soname: "libfoo.so.1", llp: "/opt/hw", subdirs: []string{"glibc-hwcaps/x86-64-v2"},
			wantPath: "/opt/hw/libfoo.so.1", wantVia: ViaLDLibraryPath},
		{name: "cache", soname: "libcached.so.1", wantPath: "/opt/cached/libcached.so.1", wantVia: ViaCache},
		{name: "LD_LIBRARY_PATH before the cache", soname: "libcached.so.1", llp: ma, wantPath: ma + "/libcached.so.1", wantVia: ViaLDLibraryPath},
		{name: "a cache entry of the wrong class is skipped", soname: "libswap.so.1", wantPath: ma + "/libswap.so.1", wantVia: ViaDefaultDirs,
			wantTried: []string{"/opt/cached/libswap.so.1: wrong ELF class"}},
		{name: "a 32-bit cache entry is not even looked at", soname: "libqux.so.3", wantErr: ErrNotFound,
			wantTried: []string{`/etc/ld.so.cache: no entry for "libqux.so.3" with flags 0x0303`, ma + "/libqux.so.3: wrong ELF class"}},
		{name: "empty cache", soname: "libcached.so.1", cache: "/etc/empty.cache", wantPath: ma + "/libcached.so.1", wantVia: ViaDefaultDirs,
			wantTried: []string{`/etc/empty.cache: malformed ld.so.cache "/etc/empty.cache": empty file`}},
		{name: "unknown cache magic", soname: "libcached.so.1", cache: "/etc/magic.cache", wantPath: ma + "/libcached.so.1", wantVia: ViaDefaultDirs,
			wantTried: []string{`"/etc/magic.cache" at offset 0: unknown magic`}},
		{name: "truncated cache", soname: "libcached.so.1", cache: "/etc/truncated.cache", wantPath: ma + "/libcached.so.1", wantVia: ViaDefaultDirs,
			wantTried: []string{`"/etc/truncated.cache" at offset 20: truncated`}},
		{name: "missing cache", soname: "libcached.so.1", cache: "/etc/none.cache", wantPath: ma + "/libcached.so.1", wantVia: ViaDefaultDirs,
			wantTried: []string{"/etc/none.cache: cache not read: no such file"}},
		{name: "default directories", soname: "libdef.so.1", wantPath: ma + "/libdef.so.1", wantVia: ViaDefaultDirs},
		{name: "symlink: Path is what the loader opens, RealPath the file", soname: "libsym.so.1", wantPath: ma + "/libsym.so.1", wantReal: ma + "/libsym.so.1.2.3", wantVia: ViaDefaultDirs},
		{name: "absolute symlink stays inside Root", soname: "libabs.so.1", llp: "/opt/abs", wantPath: "/opt/abs/libabs.so.1", wantReal: ma + "/libdef.so.1", wantVia: ViaLDLibraryPath},
		{name: "default directory with a bad file", soname: "libnotelf.so.1", wantErr: ErrBadLibrary,
			wantTried: []string{"libnotelf.so.1: invalid ELF header"}},
		{name: "not found", soname: "libnothere.so.1", llp: "/opt/a", wantErr: ErrNotFound,
			wantTried: []string{"/opt/a/libnothere.so.1: no such file", "/etc/ld.so.cache: no entry", ma + "/libnothere.so.1: no such file", "/usr/lib/libnothere.so.1: no such file"}},
		{name: "a name with a slash is opened as it is", soname: "/opt/b/libfoo.so.1", llp: "/opt/a", wantPath: "/opt/b/libfoo.so.1", wantVia: ViaPath},
		{name: "a path of the wrong class is not found", soname: "/opt/w32/libfoo.so.1", wantErr: ErrNotFound,
			wantTried: []string{"/opt/w32/libfoo.so.1: wrong ELF class"}},
		{name: "a relative path is refused", soname: "opt/b/libfoo.so.1", wantErr: ErrRelative},
		{name: "a path with a token is not guessed", soname: "$ORIGIN/libfoo.so.1", wantErr: ErrUnmodeled},
		{name: "empty name", soname: "", wantErr: nil},
		{name: "aarch64 process: another machine, class and default directories", soname: "libfoo.so.1", llp: "/opt/x86:/opt/arm", machine: elf.EM_AARCH64,
			wantPath: "/opt/arm/libfoo.so.1", wantVia: ViaLDLibraryPath, wantTried: []string{"/opt/x86/libfoo.so.1: wrong machine: EM_X86_64, this process is EM_AARCH64"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			subdirs := tc.subdirs
			if subdirs == nil {
				subdirs = []string{}
			}
			l := Loader{Root: root, Getenv: env(map[string]string{"LD_LIBRARY_PATH": tc.llp}), CachePath: tc.cache, HWCapsSubdirs: subdirs, Machine: tc.machine}
			res, err := l.Resolve(tc.soname)
			tried := res.Tried
			var re *ResolveError
			switch {
			case tc.name == "empty name":
				if err == nil {
					t.Fatal("no error for an empty name")
				}
				return
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Resolve = %+v, %v; want %v", res, err, tc.wantErr)
				}
				if !errors.As(err, &re) {
					t.Fatalf("%T is not a *ResolveError", err)
				}
				if re.Soname != tc.soname || !strings.Contains(err.Error(), tc.soname) {
					t.Errorf("error %q does not name %q", err, tc.soname)
				}
				tried = re.Tried
				if re.Path != "" {
					tried = append(tried, search.Attempt{Path: re.Path, Reason: re.Reason})
				}
			case err != nil:
				t.Fatalf("Resolve: %v (tried %+v)", err, err.(*ResolveError).Tried)
			default:
				want := Resolution{Path: tc.wantPath, RealPath: tc.wantReal, Via: tc.wantVia}
				if want.RealPath == "" {
					want.RealPath = want.Path
				}
				got := res
				got.Tried = nil
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Resolve = %+v\nwant %+v", got, want)
				}
			}
			assertTried(t, tried, tc.wantTried)
		})
	}
}

func assertTried(t *testing.T, tried []search.Attempt, want []string) {
	t.Helper()
	var lines []string
	for _, a := range tried {
		lines = append(lines, a.Path+": "+a.Reason)
	}
	i := 0
	for _, l := range lines {
		if i < len(want) && strings.Contains(l, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("Tried lacks %q (in this order after the ones before it):\n%s", want[i], strings.Join(lines, "\n"))
	}
}

func TestLoader_Resolve_Unsupported(t *testing.T) {
	l := Loader{Machine: elf.EM_386, Class: elf.ELFCLASS32}
	if _, err := l.Resolve("libc.so.6"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("err = %v, want errors.ErrUnsupported", err)
	}
}

func TestRootFS_realPath(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"usr/lib/libz.so.1.3": "z",
		"usr/lib/libz.so.1":   "-> libz.so.1.3",
		"lib":                 "-> usr/lib",
		"opt/abs.so":          "-> /lib/libz.so.1",
		"opt/up.so":           "-> ../../../../usr/lib/libz.so.1",
		"opt/loop.so":         "-> loop.so",
		"opt/file/under.so":   "x",
		"opt/escape.so":       "-> /" + strings.TrimPrefix(root, "/") + "/usr/lib/libz.so.1",
		"opt/dangling.so":     "-> /nonexistent",
		"usr/lib/x/libdot.so": "d",
		"opt/dotted/lib.so":   "-> /usr/lib/./x/../x/libdot.so",
		"opt/through-file.so": "-> /opt/file/under.so/more",
	})
	r := newRootFS(root)
	tests := []struct {
		path, want string
		wantErr    bool
	}{
		{"/lib/libz.so.1", "/usr/lib/libz.so.1.3", false},
		{"/opt/abs.so", "/usr/lib/libz.so.1.3", false},
		{"/opt/up.so", "/usr/lib/libz.so.1.3", false}, // ".." stops at the root
		{"/opt/dotted/lib.so", "/usr/lib/x/libdot.so", false},
		{"/opt/loop.so", "", true},
		{"/opt/dangling.so", "", true},
		{"/opt/escape.so", "", true}, // the host path of root does not exist inside root
		{"/opt/through-file.so", "", true},
	}
	for _, tc := range tests {
		got, err := r.realPath(tc.path)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("realPath(%q) = %q, %v; want %q (error: %v)", tc.path, got, err, tc.want, tc.wantErr)
		}
	}
	if _, err := r.open("/opt/loop.so"); err == nil {
		t.Error("opened a symlink loop")
	}
	data, err := r.readFile("/opt/abs.so")
	if err != nil || string(data) != "z" {
		t.Errorf("readFile through an absolute symlink = %q, %v", data, err)
	}
	if got, err := newRootFS("").realPath(filepath.Join(root, "lib/libz.so.1")); err != nil || got != filepath.Join(root, "usr/lib/libz.so.1.3") {
		t.Errorf("host realPath = %q, %v", got, err)
	}
}

func Test_splitPath(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"/a", []string{"/a"}},
		{"/a:/b;/c", []string{"/a", "/b", "/c"}},
		{":/a", []string{"", "/a"}},
		{"/a::/b:", []string{"/a", "", "/b"}},
		{"/a///:/a:/b/", []string{"/a", "/b"}},
		{"/:/", []string{"/"}},
	}
	for _, tc := range tests {
		if got := splitPath(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func Test_legacySubdirs(t *testing.T) {
	tests := []struct {
		caps     []string
		platform string
		want     []string
	}{
		// glibc 2.36 on an AMD x86_64 CPU, as LD_DEBUG=libs prints it.
		{[]string{"x86_64"}, "x86_64", []string{"tls/x86_64/x86_64", "tls/x86_64", "tls", "x86_64/x86_64", "x86_64"}},
		// An Intel CPU with AVX-512: hwcap bits in bit order, then the platform, then tls.
		{[]string{"x86_64", "avx512_1"}, "haswell", []string{
			"tls/haswell/avx512_1/x86_64", "tls/haswell/avx512_1", "tls/haswell/x86_64", "tls/haswell",
			"tls/avx512_1/x86_64", "tls/avx512_1", "tls/x86_64", "tls",
			"haswell/avx512_1/x86_64", "haswell/avx512_1", "haswell/x86_64", "haswell",
			"avx512_1/x86_64", "avx512_1", "x86_64"}},
		{nil, "aarch64", []string{"tls/aarch64", "tls", "aarch64"}},
	}
	for _, tc := range tests {
		if got := legacySubdirs(tc.caps, tc.platform); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("legacySubdirs(%q, %q) =\n%q\nwant\n%q", tc.caps, tc.platform, got, tc.want)
		}
	}
}

func Test_readInterpreter(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		dirs    []string
		version glibcVersion
	}{
		{"Debian", "\x00\x00/lib/x86_64-linux-gnu/\x00/usr/lib/x86_64-linux-gnu/\x00/lib/\x00/usr/lib/\x00\x00ld.so (Debian GLIBC 2.36-9) stable release version 2.36.\x00",
			[]string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"}, glibcVersion{2, 36}},
		{"upstream", "xx\x00/etc/ld.so.preload\x00/proc/self/\x00/lib64/\x00/usr/lib64/\x00release version 2.39.\x00",
			[]string{"/lib64", "/usr/lib64"}, glibcVersion{2, 39}},
		{"Arch", "\x00/usr/lib/\x00\x01\x02development release version 2.41.9000", []string{"/usr/lib"}, glibcVersion{2, 41}},
		{"not a loader", "\x7fELF\x00random bytes\x00", nil, glibcVersion{}},
		{"a run must start at a string", "x/lib/\x00/usr/lib/\x00", []string{"/usr/lib"}, glibcVersion{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := readInterpreter([]byte(tc.data))
			if !reflect.DeepEqual(f.systemDirs, tc.dirs) || f.version != tc.version {
				t.Errorf("readInterpreter = %q, %v; want %q, %v", f.systemDirs, f.version, tc.dirs, tc.version)
			}
		})
	}
}

func TestLoader_DefaultDirsFallback(t *testing.T) {
	tg, err := findTarget(elf.EM_NONE, elf.ELFCLASSNONE)
	if err != nil {
		t.Skip(err)
	}
	debian, upstream := t.TempDir(), t.TempDir()
	tree(t, debian, map[string]string{"usr/lib/" + tg.triplet: "dir"})
	for root, want := range map[string][]string{
		debian:   {"/lib/" + tg.triplet, "/usr/lib/" + tg.triplet, "/lib", "/usr/lib"},
		upstream: {"/lib64", "/usr/lib64"},
	} {
		s, err := (&Loader{Root: root}).newSearch("libx.so")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.dirs, want) {
			t.Errorf("default dirs under %s = %q, want %q", root, s.dirs, want)
		}
	}
}

func TestResolveError_Error(t *testing.T) {
	tried := []search.Attempt{{Path: "/a/libx.so", Reason: "no such file"}, {Path: "/etc/ld.so.cache", Reason: "no entry"}}
	tests := []struct {
		err  *ResolveError
		want string
	}{
		{&ResolveError{Soname: "libx.so", Tried: tried, Err: ErrNotFound}, `the loader would not find "libx.so" (2 places tried)`},
		{&ResolveError{Soname: "libx.so", Path: "/a/libx.so", Reason: "invalid ELF header", Err: ErrBadLibrary}, `dlopen("libx.so") would fail at "/a/libx.so": invalid ELF header`},
		{&ResolveError{Soname: "lib/x.so", Path: "lib/x.so", Reason: "a relative path", Err: ErrRelative}, `dlopen("lib/x.so"): refusing "lib/x.so", relative to the working directory: a relative path`},
		{&ResolveError{Soname: "libx.so", Path: "$ORIGIN", Reason: "token", Err: ErrUnmodeled}, `cannot predict where the loader finds "libx.so": "$ORIGIN": token`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q\nwant      %q", got, tc.want)
		}
		if !errors.Is(tc.err, tc.err.Err) {
			t.Errorf("%v does not match its sentinel", tc.err)
		}
	}
	ce := &CacheError{Path: "/etc/ld.so.cache", Offset: 20, Reason: "truncated"}
	if got, want := ce.Error(), `malformed ld.so.cache "/etc/ld.so.cache" at offset 20: truncated`; got != want || !errors.Is(ce, ErrBadCache) {
		t.Errorf("CacheError = %q, Is(ErrBadCache) = %v; want %q", got, errors.Is(ce, ErrBadCache), want)
	}
}

func Test_detectHWCapsSubdirs(t *testing.T) {
	m := hostMachine()
	if m == elf.EM_NONE {
		t.Skip("no loader model for this GOARCH")
	}
	kinds := func(subdirs []string) (named, legacy int) {
		for _, s := range subdirs {
			if strings.HasPrefix(s, "glibc-hwcaps/") {
				if legacy > 0 {
					t.Errorf("glibc-hwcaps subdirectory %q after a legacy one in %q", s, subdirs)
				}
				named++
			} else {
				legacy++
			}
		}
		return named, legacy
	}
	tests := []struct {
		version           glibcVersion
		wantNamed, legacy bool // wantNamed: glibc-hwcaps allowed (the CPU decides which)
	}{
		{glibcVersion{2, 32}, false, true},
		{glibcVersion{2, 33}, true, true},
		{glibcVersion{2, 36}, true, true},
		{glibcVersion{2, 37}, true, false},
		{glibcVersion{2, 41}, true, false},
		{glibcVersion{3, 0}, true, false},
		{glibcVersion{}, true, false}, // unknown: assume a current glibc
	}
	for _, tc := range tests {
		subdirs := detectHWCapsSubdirs(m, tc.version)
		named, legacy := kinds(subdirs)
		if named > 0 && !tc.wantNamed || (legacy > 0) != tc.legacy {
			t.Errorf("glibc %v: %q", tc.version, subdirs)
		}
		if tc.legacy && !slices.Contains(subdirs, "tls") {
			t.Errorf("glibc %v: no tls subdirectory in %q", tc.version, subdirs)
		}
	}
	other := elf.EM_AARCH64
	if m == elf.EM_AARCH64 {
		other = elf.EM_X86_64
	}
	if got := detectHWCapsSubdirs(other, glibcVersion{2, 36}); got != nil {
		t.Errorf("another machine's CPU is unknown, yet subdirectories %q", got)
	}
}
