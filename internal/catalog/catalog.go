// Package catalog reads descriptor packs (TOML files of [[library]] tables) into the catalog of
// libraries the host knows, and checks them: unknown keys, duplicates and dependency cycles are errors
// that name the file and line.
package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/cudaversion"
	"github.com/pathfinder-dev/pathfinder/internal/suggest"
	"github.com/pathfinder-dev/pathfinder/internal/tomlx"
)

// Entry is one descriptor and the pack that defined it.
type Entry struct {
	abi.Descriptor
	Kind abi.Kind
	Pack string // the pack's file name and line
}

// Category is how `list` groups libraries: "ctk", "third-party" or "driver". A pack may say
// "other" for third-party, as cuda.pathfinder's catalog does.
func (e *Entry) Category() string {
	if e.PackagedWith == "other" {
		return "third-party"
	}
	return e.PackagedWith
}

// AvailableOn reports whether the library declares files for p.
func (e *Entry) AvailableOn(p abi.Platform) bool { return len(e.FileNames(p)) > 0 }

// Catalog is every known descriptor by kind and name.
type Catalog struct {
	byName map[key]*Entry
	names  map[abi.Kind][]string // in pack order
	hash   string                // of every pack's name and contents, in order
}

// Hash identifies the packs the catalog was read from: any change to any of them changes it.
func (c *Catalog) Hash() string { return c.hash }

type key struct {
	kind abi.Kind
	name string
}

// Targets are the platforms a search can be for, "os/arch": host.ParsePlatform's and --target's
// values, and the platforms the step tests compare on.
var Targets = []string{"linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}

// Kinds lists the kinds in the order packs and listings show them, with their pack table names.
var Kinds = []struct {
	Kind  abi.Kind
	Table string
}{
	{abi.KindDynamicLib, "library"},
	{abi.KindHeaderDir, "header"},
	{abi.KindBinary, "binary"},
	{abi.KindStaticLib, "static_lib"},
	{abi.KindBitcode, "bitcode"},
}

type packFile struct {
	Library   []packLibrary `toml:"library"`
	Header    []packLibrary `toml:"header"`
	Binary    []packLibrary `toml:"binary"`
	StaticLib []packLibrary `toml:"static_lib"`
	Bitcode   []packLibrary `toml:"bitcode"`
}

func (f *packFile) tables() [][]packLibrary {
	return [][]packLibrary{f.Library, f.Header, f.Binary, f.StaticLib, f.Bitcode}
}

type packLibrary struct {
	packDescriptor
	Replaces bool `toml:"replaces"`
}

// packDescriptor is a descriptor as a pack spells it in TOML: abi.Descriptor's fields, in its order,
// with the pack's keys. The wire type is made of it by a conversion, so the compiler holds the two to
// the same fields; the keys the wire does not carry (cuda_majors, companions, …) are the host's.
type packDescriptor struct {
	Name                           string            `toml:"name"`
	PackagedWith                   string            `toml:"packaged_with"`
	LinuxSonames                   []string          `toml:"linux_sonames"`
	WindowsDLLs                    []string          `toml:"windows_dlls"`
	SupportedWindowsArch           []string          `toml:"supported_windows_arch"`
	LinuxFiles                     []string          `toml:"linux_files"`
	WindowsFiles                   []string          `toml:"windows_files"`
	CondaRelDirsLinux              []string          `toml:"conda_rel_dirs_linux"`
	CondaRelDirsWindows            []string          `toml:"conda_rel_dirs_windows"`
	CondaRelDirsWindowsArm64       []string          `toml:"conda_rel_dirs_windows_arm64"`
	SitePackagesLinux              []string          `toml:"site_packages_linux"`
	SitePackagesWindows            []string          `toml:"site_packages_windows"`
	SitePackagesWindowsArm64       []string          `toml:"site_packages_windows_arm64"`
	AnchorRelDirsLinux             []string          `toml:"anchor_rel_dirs_linux"`
	AnchorRelDirsWindows           []string          `toml:"anchor_rel_dirs_windows"`
	InstallRootEnvVars             []string          `toml:"install_root_env_vars"`
	InstallRootRelDirs             []string          `toml:"install_root_rel_dirs"`
	InstallRootRelDirsWindows      []string          `toml:"install_root_rel_dirs_windows"`
	InstallRootRelDirsWindowsArm64 []string          `toml:"install_root_rel_dirs_windows_arm64"`
	Dependencies                   []string          `toml:"dependencies"`
	OptionalDependencies           []string          `toml:"optional_dependencies"`
	CanaryAnchors                  []string          `toml:"ctk_root_canary_anchor_libnames"`
	RequiresAddDLLDirectory        bool              `toml:"requires_add_dll_directory"`
	RequiresRTLDDeepbind           bool              `toml:"requires_rtld_deepbind"`
	ProgramFilesDirsWindows        []string          `toml:"program_files_dirs_windows"`
	CUDAMajors                     map[string]string `toml:"cuda_majors"`
	VersionedAsCUDA                bool              `toml:"versioned_as_cuda"`
	Companions                     []string          `toml:"companions"`
	CompanionFiles                 []string          `toml:"companion_files"`
}

// Pack is a descriptor pack's source: a name for messages and its contents.
type Pack struct {
	Name string
	Data []byte
}

// New reads packs in order and checks the result as a whole.
func New(packs ...Pack) (*Catalog, error) {
	c := &Catalog{byName: map[key]*Entry{}, names: map[abi.Kind][]string{}}
	c.hash = hashPacks(packs)
	for _, p := range packs {
		if err := c.add(p); err != nil {
			return nil, err
		}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Catalog) add(p Pack) error {
	var f packFile
	if err := tomlx.Decode("pack "+p.Name, p.Data, &f); err != nil {
		return err
	}
	for t, table := range f.tables() {
		kind, tname := Kinds[t].Kind, Kinds[t].Table
		for i := range table {
			if err := c.addEntry(p, tname, kind, i, &table[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Catalog) addEntry(p Pack, table string, kind abi.Kind, i int, l *packLibrary) error {
	line, _ := findNth(p.Data, "[["+table+"]]", i)
	where := fmt.Sprintf("%s:%d", p.Name, line)
	dynamic := kind == abi.KindDynamicLib
	switch {
	case l.Name == "":
		return fmt.Errorf("pack %s: [[%s]] without a name", where, table)
	case l.PackagedWith != "ctk" && l.PackagedWith != "third-party" && l.PackagedWith != "other" && l.PackagedWith != "driver":
		return fmt.Errorf("pack %s: %s %q: packaged_with is %q, expected \"ctk\", \"third-party\" (or cuda.pathfinder's \"other\") or \"driver\"", where, table, l.Name, l.PackagedWith)
	case dynamic && len(l.LinuxSonames) == 0 && len(l.WindowsDLLs) == 0:
		return fmt.Errorf("pack %s: library %q declares no linux_sonames and no windows_dlls", where, l.Name)
	case dynamic && len(l.LinuxFiles)+len(l.WindowsFiles) > 0:
		return fmt.Errorf("pack %s: library %q: linux_files and windows_files are for the other kinds; a [[library]] declares linux_sonames and windows_dlls", where, l.Name)
	case !dynamic && len(l.LinuxFiles) == 0 && len(l.WindowsFiles) == 0:
		return fmt.Errorf("pack %s: %s %q declares no linux_files and no windows_files", where, table, l.Name)
	case !dynamic && len(l.LinuxSonames)+len(l.WindowsDLLs)+len(l.Dependencies)+len(l.OptionalDependencies) > 0:
		return fmt.Errorf("pack %s: %s %q: sonames, DLL names and dependencies are for [[library]] tables", where, table, l.Name)
	case badWindowsArch(l.SupportedWindowsArch) != "":
		return fmt.Errorf("pack %s: %s %q: supported_windows_arch holds %q, expected \"x64\" or \"arm64\"", where, table, l.Name, badWindowsArch(l.SupportedWindowsArch))
	case nulField(&l.packDescriptor) != "":
		return fmt.Errorf("pack %s: %s %q: %s holds a NUL byte, which no file or directory name can", where, table, l.Name, nulField(&l.packDescriptor))
	case badCUDAMajor(&l.packDescriptor) != "":
		return fmt.Errorf("pack %s: %s %q: %s", where, table, l.Name, badCUDAMajor(&l.packDescriptor))
	case slices.ContainsFunc(l.CompanionFiles, func(f string) bool { return strings.Count(f, "{cuda}") != 1 || strings.ContainsAny(f, "/\\") }):
		return fmt.Errorf("pack %s: %s %q: each of companion_files is a file name with {cuda} in it once, such as \"libnvrtc-builtins.so.{cuda}\"", where, table, l.Name)
	}
	k := key{kind, l.Name}
	if old, ok := c.byName[k]; ok && !l.Replaces {
		return fmt.Errorf("%s %q is defined by both %s and %s (set replaces = true in one to override the other)", table, l.Name, old.Pack, where)
	} else if !ok {
		c.names[kind] = append(c.names[kind], l.Name)
	}
	c.byName[k] = &Entry{Descriptor: abi.Descriptor(l.packDescriptor), Kind: kind, Pack: where}
	return nil
}

// badWindowsArch returns the first of archs that names no Windows architecture, or "".
func badWindowsArch(archs []string) string {
	for _, a := range archs {
		if a != "x64" && a != "arm64" {
			return a
		}
	}
	return ""
}

// badCUDAMajor says what is wrong with l's cuda_majors, or "": each key must be one of l's file
// names and each value a CUDA major ("12"), so that the mapping cannot date a file it does not name.
func badCUDAMajor(l *packDescriptor) string {
	for _, name := range slices.Sorted(maps.Keys(l.CUDAMajors)) {
		files := slices.Concat(l.LinuxSonames, l.WindowsDLLs, l.LinuxFiles, l.WindowsFiles)
		if !slices.Contains(files, name) {
			return fmt.Sprintf("cuda_majors names %q, which is not one of its file names", name)
		}
		if major := l.CUDAMajors[name]; !cudaversion.IsMajor(major) {
			return fmt.Sprintf("cuda_majors gives %q for %q, expected a CUDA major such as \"12\"", major, name)
		}
	}
	return ""
}

// nulField names the first field of l (as a pack spells it) with a NUL byte in a string, or "".
func nulField(l *packDescriptor) string {
	v := reflect.ValueOf(l).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		var ss []string
		switch f.Kind() {
		case reflect.String:
			ss = []string{f.String()}
		case reflect.Slice:
			ss, _ = f.Interface().([]string)
		}
		for _, s := range ss {
			if strings.IndexByte(s, 0) >= 0 {
				return v.Type().Field(i).Tag.Get("toml")
			}
		}
	}
	return ""
}

// check rejects unknown dependencies and dependency cycles.
func (c *Catalog) check() error {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		switch state[name] {
		case visiting:
			return fmt.Errorf("dependency cycle: %s", strings.Join(append(path, name), " -> "))
		case done:
			return nil
		}
		state[name] = visiting
		e := c.byName[key{abi.KindDynamicLib, name}]
		for _, dep := range append(append([]string(nil), e.Dependencies...), e.OptionalDependencies...) {
			if _, ok := c.byName[key{abi.KindDynamicLib, dep}]; !ok {
				return fmt.Errorf("pack %s: library %q depends on unknown library %q", e.Pack, name, dep)
			}
			if err := visit(dep, append(path, name)); err != nil {
				return err
			}
		}
		state[name] = done
		return nil
	}
	for _, name := range c.names[abi.KindDynamicLib] {
		if err := visit(name, nil); err != nil {
			return err
		}
	}
	for _, k := range Kinds {
		for _, name := range c.names[k.Kind] {
			e := c.byName[key{k.Kind, name}]
			for _, other := range e.Companions {
				if !c.known(other) {
					return fmt.Errorf("pack %s: %s %q names an unknown companion %q", e.Pack, k.Table, name, other)
				}
			}
		}
	}
	return nil
}

// known reports whether an entry of any kind is called name.
func (c *Catalog) known(name string) bool {
	for _, k := range Kinds {
		if _, ok := c.byName[key{k.Kind, name}]; ok {
			return true
		}
	}
	return false
}

func hashPacks(packs []Pack) string {
	h := sha256.New()
	for _, p := range packs {
		fmt.Fprintf(h, "%s\x00%d\x00", p.Name, len(p.Data))
		h.Write(p.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Lookup returns the descriptor of kind called name.
func (c *Catalog) Lookup(kind abi.Kind, name string) (*Entry, bool) {
	e, ok := c.byName[key{kind, name}]
	return e, ok
}

// Descriptors returns every descriptor of kind in pack order.
func (c *Catalog) Descriptors(kind abi.Kind) []abi.Descriptor {
	out := make([]abi.Descriptor, len(c.names[kind]))
	for i, n := range c.names[kind] {
		out[i] = c.byName[key{kind, n}].Descriptor
	}
	return out
}

// Names returns every name of kind in pack order.
func (c *Catalog) Names(kind abi.Kind) []string { return append([]string(nil), c.names[kind]...) }

// Suggest returns known names of kind close to name, best first (suggest.Closest).
func (c *Catalog) Suggest(kind abi.Kind, name string) []string {
	return suggest.Closest(name, c.names[kind])
}

// Named returns the entries, of any kind, that name stands for when it is not one of kind's names:
// another kind's entry called name (nvcc, a binary), or an entry one of whose files is name, or name
// and a version or suffix (libdevice: the bitcode library device's libdevice.10.bc; libcudart).
func (c *Catalog) Named(kind abi.Kind, name string) []*Entry {
	var out []*Entry
	for _, k := range Kinds {
		for _, n := range c.names[k.Kind] {
			e := c.byName[key{k.Kind, n}]
			if n == name && k.Kind != kind || n != name && hasFile(e, name) {
				out = append(out, e)
			}
		}
	}
	return out
}

// hasFile reports whether one of e's files, on any platform, is name or begins with name and a dot.
func hasFile(e *Entry, name string) bool {
	for _, os := range []string{"linux", "windows"} {
		for _, f := range e.FileNames(abi.Platform{OS: os}) {
			if f == name || strings.HasPrefix(f, name+".") {
				return true
			}
		}
	}
	return false
}

// findNth returns the 1-based line of the n-th (0-based) line starting with prefix.
func findNth(data []byte, prefix string, n int) (int, bool) {
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), prefix) {
			if n == 0 {
				return i + 1, true
			}
			n--
		}
	}
	return 0, false
}
