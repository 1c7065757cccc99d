package loadermodel

import (
	"debug/elf"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
)

// Needs is what a shared object asks of the loader besides itself, from its dynamic section.
type Needs struct {
	Soname   string              // DT_SONAME, "" when it has none
	Needed   []string            // DT_NEEDED, in order
	RPath    []string            // DT_RPATH; the loader ignores it when there is a DT_RUNPATH
	RunPath  []string            // DT_RUNPATH
	Versions map[string][]string // per needed file, the symbol versions it must define (weak ones left out)
	PIE      bool                // DF_1_PIE: a position-independent executable, which dlopen refuses
}

// ReadNeeds reads what f needs. An object without a dynamic section needs nothing.
func ReadNeeds(f *elf.File) (Needs, error) {
	var n Needs
	if f.Section(".dynamic") == nil && f.SectionByType(elf.SHT_DYNAMIC) == nil {
		return n, nil
	}
	var err error
	str := func(tag elf.DynTag) []string {
		v, e := f.DynString(tag)
		err = errors.Join(err, e)
		return v
	}
	if s := str(elf.DT_SONAME); len(s) > 0 {
		n.Soname = s[0]
	}
	n.Needed = str(elf.DT_NEEDED)
	for _, v := range str(elf.DT_RPATH) {
		n.RPath = append(n.RPath, strings.Split(v, ":")...)
	}
	for _, v := range str(elf.DT_RUNPATH) {
		n.RunPath = append(n.RunPath, strings.Split(v, ":")...)
	}
	if flags, e := f.DynValue(elf.DT_FLAGS_1); e == nil && len(flags) > 0 {
		n.PIE = elf.DynFlag1(flags[0])&elf.DF_1_PIE != 0
	}
	if needs, e := f.DynamicVersionNeeds(); e == nil {
		for _, need := range needs {
			for _, d := range need.Needs {
				if d.Flags&elf.VER_FLG_WEAK == 0 {
					if n.Versions == nil {
						n.Versions = map[string][]string{}
					}
					n.Versions[need.Name] = append(n.Versions[need.Name], d.Dep)
				}
			}
		}
	}
	return n, err
}

// SearchDirs is the object's own search path as the loader uses it for the object at file: DT_RPATH
// (before LD_LIBRARY_PATH) only when there is no DT_RUNPATH (after it), $ORIGIN expanded to the
// object's directory. $LIB and $PLATFORM stay, and ResolveNeeded refuses to guess them.
func (n Needs) SearchDirs(file string) (rpath, runpath []string) {
	origin := path.Dir(file)
	expand := func(dirs []string) []string {
		var out []string
		for _, d := range dirs {
			d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
			if d != "" {
				out = append(out, d)
			}
		}
		return out
	}
	if len(n.RunPath) > 0 {
		return nil, expand(n.RunPath)
	}
	return expand(n.RPath), nil
}

// LoadProblem predicts what would make dlopen of the object at file fail after it is opened: a
// DT_NEEDED library the loader would not find, or one that lacks a symbol version the object
// needs (a library built against a newer glibc). provided reports the names that will already be
// loaded (the loader matches those by soname, with no search). seen, when not nil, gets every
// search made. "" means nothing this model knows of would fail; a search the model cannot predict
// ($LIB in a DT_RUNPATH) is no problem, not a guess.
func (l *Loader) LoadProblem(file string, n Needs, provided func(soname string) bool, seen func(Resolution, error)) string {
	rpath, runpath := n.SearchDirs(file)
	for _, name := range n.Needed {
		if provided != nil && provided(name) {
			continue
		}
		res, err := l.ResolveNeeded(name, rpath, runpath)
		if seen != nil {
			seen(res, err)
		}
		var re *ResolveError
		switch {
		case errors.Is(err, ErrNotFound):
			return fmt.Sprintf("it needs %s, which the loader would not find (%s)", name, searched(rpath, runpath))
		case errors.Is(err, ErrBadLibrary) && errors.As(err, &re):
			return fmt.Sprintf("it needs %s, and the loader would stop at %s: %s", name, re.Path, re.Reason)
		case err != nil:
			continue
		}
		if missing, have := l.missingVersions(res.Path, n.Versions[name]); missing != "" {
			msg := fmt.Sprintf("%s: version %s not found (required by %s)", res.Path, missing, path.Base(file))
			if have != "" {
				msg += "; this system has up to " + have
			}
			return msg
		}
	}
	return ""
}

func searched(rpath, runpath []string) string {
	var places []string
	if len(rpath) > 0 {
		places = append(places, "DT_RPATH "+strings.Join(rpath, ":"))
	}
	places = append(places, "LD_LIBRARY_PATH")
	if len(runpath) > 0 {
		places = append(places, "DT_RUNPATH "+strings.Join(runpath, ":"))
	}
	return "searched " + strings.Join(places, ", ") + ", ld.so.cache and the default directories"
}

// missingVersions is the first of want that the library at p does not define, and the newest
// version it defines in that family ("GLIBC_2.36" for a missing "GLIBC_2.38"). A library without
// version definitions satisfies everything: the loader only warns about it.
func (l *Loader) missingVersions(p string, want []string) (missing, have string) {
	if len(want) == 0 {
		return "", ""
	}
	file, err := newRootFS(l.Root).open(p)
	if err != nil {
		return "", ""
	}
	defer file.Close()
	ef, err := elf.NewFile(file)
	if err != nil {
		return "", ""
	}
	defs := versionNames(ef)
	if len(defs) == 0 {
		return "", ""
	}
	for _, w := range want {
		if slices.Contains(defs, w) {
			continue
		}
		family, _, _ := strings.Cut(w, "_")
		for _, d := range defs {
			if f, _, ok := strings.Cut(d, "_"); ok && f == family && (have == "" || olderVersion(have, d)) {
				have = d
			}
		}
		return w, have
	}
	return "", ""
}

// versionNames reads the names of the versions an object defines (SHT_GNU_verdef), nil when it
// defines none. debug/elf's DynamicVersions reads the whole dynamic symbol table to say the same,
// which for libc is most of the cost of a prediction.
func versionNames(f *elf.File) []string {
	sec := f.SectionByType(elf.SHT_GNU_VERDEF)
	if sec == nil || int(sec.Link) >= len(f.Sections) {
		return nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil
	}
	strs, err := f.Sections[sec.Link].Data()
	if err != nil {
		return nil
	}
	var names []string
	for off, n := 0, 0; off+20 <= len(data) && n < 1<<16; n++ {
		// Elf_Verdef: version, flags, ndx, cnt (u16), hash, aux, next (u32); aux -> Elf_Verdaux:
		// name, next (u32). The first aux names the version itself.
		aux := off + int(f.ByteOrder.Uint32(data[off+12:]))
		if aux+8 <= len(data) {
			if name := int(f.ByteOrder.Uint32(data[aux:])); name < len(strs) {
				end := name
				for end < len(strs) && strs[end] != 0 {
					end++
				}
				names = append(names, string(strs[name:end]))
			}
		}
		next := int(f.ByteOrder.Uint32(data[off+16:]))
		if next == 0 {
			break
		}
		off += next
	}
	return names
}

// olderVersion orders symbol versions of one family by number: GLIBC_2.9 before GLIBC_2.36.
func olderVersion(a, b string) bool {
	_, av, _ := strings.Cut(a, "_")
	_, bv, _ := strings.Cut(b, "_")
	return tables.CompareVersions(av, bv) < 0
}
