// Package cudaversion tells which CUDA toolkit a file a search found belongs to, and the file's own
// version, from what lies around it: the toolkit root it is in, the wheel or conda package that
// installed it, its file name, a DLL's version resource, the catalog. It never guesses: where no
// source says, the answer has no CUDA, and says what was asked.
package cudaversion

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// Source is where an answer came from.
type Source string

const (
	Toolkit     Source = "toolkit"      // the toolkit root the file lies in: version.json, else include/cuda.h's CUDA_VERSION
	Wheel       Source = "wheel"        // the *.dist-info whose RECORD lists the file: METADATA's Name and Version
	Conda       Source = "conda"        // the conda-meta/*.json that lists the file
	FileName    Source = "file-name"    // a fully versioned file name: libcudart.so.12.4.127
	Catalog     Source = "catalog"      // the descriptor's mapping of a declared file name to its CUDA major
	VersionInfo Source = "version-info" // a Windows DLL's VS_VERSIONINFO (for --target windows/*)
)

// Answer says which CUDA an artifact belongs to. Never a guess: no source, no CUDA.
type Answer struct {
	CUDA    string   // "12.4", or "13" when only the major is known; "" when no source says
	Version string   // the artifact's own version ("12.4.127"), where a source gives it
	From    Source   // the source that gave CUDA
	Detail  string   // what that source read, for explain: "/usr/local/cuda/version.json: CUDA 12.4.1"
	Looked  []string // when CUDA is "": each source asked and why it said nothing
}

// Artifact is a file a search found.
type Artifact struct {
	Path     string          // its host path as found, links unresolved (…/site-packages/nvidia/cu13/lib/libcudart.so.13)
	Real     string          // the file its links lead to; "" when none
	Kind     abi.Kind        // dynamic-lib, header-dir (Path is then the directory), binary, static-lib, bitcode
	Library  *abi.Descriptor // its descriptor
	Platform abi.Platform    // the search's platform; on windows the DLL's VS_VERSIONINFO is a source
	// Install says what installed the file where the search knows it (a wheel's site-packages, a
	// conda env): the sources of the other installs are not asked, as they cannot apply and their
	// looks would be re-checked with every cached answer. "" asks them all.
	Install Source
}

// sources in the order Of asks them. The catalog comes after the version resource, where the list
// of Sources names it before: it is the only source that reads nothing of the artifact, and a DLL's
// VS_VERSIONINFO also names the minor (cudart64_12.dll of CUDA 12.8 says 12.8, the catalog 12).
var sources = [...]struct {
	from Source
	ask  func(Artifact, *observe.Recorder) (Answer, string) // an answer with CUDA, or why none
}{
	{Toolkit, fromToolkit},
	{Wheel, fromWheel},
	{Conda, fromConda},
	{FileName, fromFileName},
	{VersionInfo, fromVersionInfo},
	{Catalog, fromCatalog},
}

// installs are the sources that read what installed the file, of which Artifact.Install names one.
var installs = []Source{Toolkit, Wheel, Conda}

// Sources lists the sources in the order Of asks them.
func Sources() []Source {
	out := make([]Source, len(sources))
	for i, s := range sources {
		out[i] = s.from
	}
	return out
}

// Of asks each source in order of trust and returns the first that dates the artifact. Every path it
// stats, lists or reads is recorded in rec (nil records nothing), absences included, so that a
// cached answer that holds these observations is exact: a changed or newly created version.json
// changes an observation, and the answer is made again.
func Of(a Artifact, rec *observe.Recorder) Answer {
	switch {
	case a.Path == "":
		return Answer{Looked: []string{"no file to date"}}
	case a.Library == nil:
		return Answer{Looked: []string{"no descriptor to date it by"}}
	case a.Library.PackagedWith == "driver":
		// libcuda under /usr/lib64 would otherwise take the CUDA of a /usr/include/cuda.h.
		return Answer{Looked: []string{a.Library.Name + " comes with the driver, not with a CUDA toolkit"}}
	}
	var looked []string
	for _, s := range sources {
		if a.Install != "" && s.from != a.Install && slices.Contains(installs, s.from) {
			looked = append(looked, string(s.from)+": not asked, as "+string(a.Install)+" installed it")
			continue
		}
		ans, why := s.ask(a, rec)
		if ans.CUDA != "" {
			ans.From = s.from
			return ans
		}
		looked = append(looked, string(s.from)+": "+why)
	}
	return Answer{Looked: looked}
}

// dirs are the directories a's files lie in, as found and then as their links lead: for a header
// set, the directories themselves.
func (a Artifact) dirs() []string {
	var out []string
	for _, p := range []string{a.Path, a.Real} {
		if p == "" {
			continue
		}
		if a.Kind != abi.KindHeaderDir {
			p = filepath.Dir(p)
		}
		if p = filepath.Clean(p); len(out) == 0 || out[0] != p {
			out = append(out, p)
		}
	}
	return out
}

// relTo is a's files relative to dir, slash-separated, as a package lists them: the file as found
// and as its links lead, or for a header set each declared header in it (a RECORD lists files, not
// directories). Files outside dir are left out.
func (a Artifact) relTo(dir string) []string {
	var out []string
	for _, p := range []string{a.Path, a.Real} {
		files := []string{p}
		if a.Kind == abi.KindHeaderDir {
			files = nil
			for _, f := range a.Library.FileNames(a.Platform) {
				files = append(files, filepath.Join(p, filepath.FromSlash(f)))
			}
		}
		for _, f := range files {
			if rel, err := filepath.Rel(dir, f); p != "" && err == nil && filepath.IsLocal(rel) {
				out = appendNew(out, filepath.ToSlash(rel))
			}
		}
	}
	return out
}

// appendNew appends s to list unless list holds it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// listed returns the first of rels that lists says is listed.
func listed(rels []string, lists func(rel string) bool) (string, bool) {
	for _, rel := range rels {
		if lists(rel) {
			return rel, true
		}
	}
	return "", false
}

// below asks ask about each directory that holds one of layouts (a descriptor's site-packages or
// conda directories) with a's directory at its end, and a's files relative to it (relTo), and
// returns the first answer; what names the layouts for the reason when a lies in none.
func below(a Artifact, layouts []string, what string, ask func(base string, rels []string) (Answer, string)) (Answer, string) {
	var bases, looked []string
	for _, l := range layouts {
		base, ok := under(a.dirs()[0], l)
		if !ok || slices.Contains(bases, base) {
			continue
		}
		bases = append(bases, base)
		rels := a.relTo(base)
		if len(rels) == 0 {
			looked = append(looked, "no file of "+a.Library.Name+" to look for in "+base)
			continue
		}
		ans, why := ask(base, rels)
		if ans.CUDA != "" {
			return ans, ""
		}
		looked = append(looked, why)
	}
	if len(bases) == 0 {
		return Answer{}, fmt.Sprintf("%s is in none of %s's %s", a.dirs()[0], a.Library.Name, what)
	}
	return Answer{}, strings.Join(looked, "; ")
}

// likeliest are the names of entries that end in suffix, the lowest score first, at most max: a
// package manager's records, in the order most likely to list a file.
func likeliest(entries []fs.DirEntry, suffix string, max int, score func(string) int) []string {
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) {
			names = append(names, e.Name())
		}
	}
	slices.SortStableFunc(names, func(x, y string) int { return cmp.Compare(score(x), score(y)) })
	return names[:min(len(names), max)]
}

// under returns the directory that holds layout (slash-separated directories, filepath.Match
// patterns allowed) with dir at its end: "/opt/cuda" for "/opt/cuda/targets/x86_64-linux/lib" and
// "targets/*/lib". Never the file system's root: nothing is walked that far.
func under(dir, layout string) (string, bool) {
	segs := strings.Split(filepath.ToSlash(dir), "/")
	want := strings.Split(layout, "/")
	if len(segs) <= len(want) {
		return "", false
	}
	for i, w := range want {
		if ok, _ := filepath.Match(w, segs[len(segs)-len(want)+i]); !ok {
			return "", false
		}
	}
	root := dir
	for range want {
		root = filepath.Dir(root)
	}
	if root == filepath.Dir(root) {
		return "", false
	}
	return root, true
}

// readFile reads at most limit bytes of the host file p, its stat recorded first: a file changed
// after that stat is seen changed by the re-check, so a cached answer never outlives what it read.
// whole says whether that was all of the file. A FIFO or device is never opened (sandboxfs.Open).
func readFile(rec *observe.Recorder, p string, limit int64) (data []byte, whole bool, err error) {
	if _, err := rec.Stat(p); err != nil {
		return nil, false, err
	}
	f, fi, err := sandboxfs.Open(p)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if fi.IsDir() {
		return nil, false, errors.New("a directory")
	}
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if int64(len(data)) > limit {
		return data[:limit], false, err
	}
	return data, true, err
}

// why is err as a reason in Looked: "absent" for a missing file.
func why(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "absent"
	}
	return observe.Cause(err).Error()
}

// numbers splits a dotted version into its numbers: "12.4.127" is 12, 4, 127; ok is false for
// anything else ("12.4a", "", "1..2").
func numbers(v string) (ns []int, ok bool) {
	if len(v) > 64 {
		return nil, false
	}
	for _, s := range strings.Split(v, ".") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || s[0] == '+' {
			return nil, false
		}
		ns = append(ns, n)
	}
	return ns, true
}

// majorMinor is "12.4" of a version of two or more numbers ("12.4.1", "12.6.20241114").
func majorMinor(v string) (string, bool) {
	ns, ok := numbers(v)
	if !ok || len(ns) < 2 {
		return "", false
	}
	return fmt.Sprintf("%d.%d", ns[0], ns[1]), true
}

// fromCUDAVersion reads a CUDA_VERSION number, cuda.h's encoding of a toolkit: 12040 is CUDA 12.4.
func fromCUDAVersion(n int) (string, bool) {
	if n < 1000 || n > 999990 || n%10 != 0 {
		return "", false
	}
	return fmt.Sprintf("%d.%d", n/1000, n%1000/10), true
}

// withMinor is major made major.minor from version when the descriptor says the library's version
// is its toolkit's and version is of that major: cudart 12.4.127 of CUDA 12 is CUDA 12.4.
func withMinor(l *abi.Descriptor, major, version string) string {
	if mm, ok := majorMinor(version); ok && l.VersionedAsCUDA && strings.HasPrefix(mm, major+".") {
		return mm
	}
	return major
}

// IsMajor reports whether s can be a CUDA major, as cuda_majors' values must be: one to three
// digits, without a leading zero.
func IsMajor(s string) bool {
	if len(s) == 0 || len(s) > 3 || s[0] == '0' {
		return false
	}
	return strings.Trim(s, "0123456789") == ""
}
