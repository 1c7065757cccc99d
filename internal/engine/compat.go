// The compatibility check: which CUDA each candidate belongs to, and whether this machine's driver
// and the answers the Engine gave before let it run (docs/compatibility.md).

package engine

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin/tables"
	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/compat"
	"github.com/pathfinder-dev/pathfinder/internal/cudaversion"
)

// The variables the check reads.
const (
	envCompatibility       = "PATHFINDER_COMPATIBILITY"        // the mode of every library
	envCUDA                = "PATHFINDER_CUDA"                 // the CUDA the program was built for
	envDriverCompatibility = "PATHFINDER_DRIVER_COMPATIBILITY" // assumeForward: a cuda-compat libcuda's CUDA is the ceiling
	assumeForward          = "assume-forward-compatibility"
)

// compatSettings are the Engine's settings of the check, read once in New.
type compatSettings struct {
	mode    compat.Mode // Options, else $PATHFINDER_COMPATIBILITY; "" leaves it to the config, per library
	pinned  *anchor     // Options.CUDA, $PATHFINDER_CUDA or [search] cuda; nil when none
	forward bool        // a forward-compatibility libcuda's CUDA is the ceiling
}

// readCompatSettings reads the check's settings; a bad value is an error naming the valid ones.
func readCompatSettings(opts Options, getenv func(string) string, configCUDA string) (compatSettings, error) {
	var s compatSettings
	mode, from := string(opts.Compatibility), "host.Options.Compatibility"
	if mode == "" {
		mode, from = getenv(envCompatibility), "$"+envCompatibility
	}
	if mode != "" {
		m, err := compat.ParseMode(mode)
		if err != nil {
			return s, fmt.Errorf("%s: %v", from, err)
		}
		s.mode = m
	}
	cuda, from := opts.CUDA, "host.Options.CUDA"
	if cuda == "" {
		cuda, from = getenv(envCUDA), "$"+envCUDA
	}
	if cuda == "" {
		cuda, from = configCUDA, "[search] cuda"
	}
	if cuda != "" {
		v, err := compat.ParseVersion(cuda)
		if err != nil {
			return s, fmt.Errorf("%s: %q is not a CUDA version such as \"12\" or \"12.4\"", from, cuda)
		}
		s.pinned = &anchor{v: v, pinnedBy: from}
	}
	switch v := getenv(envDriverCompatibility); {
	case opts.AssumeForwardCompatibility || v == assumeForward:
		s.forward = true
	case v != "" && v != "default":
		return s, fmt.Errorf("$%s: unknown value %q (default or %s)", envDriverCompatibility, v, assumeForward)
	}
	return s, nil
}

// anchor is the CUDA later answers must match: the first dated answer's, or the one pinned.
type anchor struct {
	v          compat.Version
	name, path string // the answer that set it
	pinnedBy   string // or the setting that pinned it: "$PATHFINDER_CUDA"
}

func (a *anchor) String() string {
	if a.pinnedBy != "" {
		return fmt.Sprintf("CUDA %s (the program's, %s)", a.v, a.pinnedBy)
	}
	return fmt.Sprintf("CUDA %d, the major of %s (CUDA %s, %s)", a.v.Major, a.name, a.v, a.path)
}

// mismatch says why v does not match the anchor, or "": one process runs one CUDA major.
func (a *anchor) mismatch(v compat.Version) string {
	switch {
	case a == nil || a.v.Major == v.Major:
		return ""
	case a.pinnedBy != "":
		return fmt.Sprintf("CUDA %s, but the program is built for CUDA %s (%s)", v, a.v, a.pinnedBy)
	}
	return fmt.Sprintf("CUDA %s, but %s already came from CUDA %s (%s)", v, a.name, a.v, a.path)
}

// driverView is the driver as the check sees it, probed once per Engine.
type driverView struct {
	d     compat.Driver
	known bool
	notes []string // why it is unknown; a forward-compatibility libcuda
	key   string   // what the result cache keys on
}

// probeDriver reads the driver's version and the CUDA it runs the cheap way: the pin, sysfs and
// procfs, never NVML, libcuda or nvidia-smi. The user-space libraries' file names (the loader's
// search for libcuda, a millisecond) are read where they say what those cannot: on WSL2, whose
// driver has no kernel module here, and for a forward-compatibility libcuda, when full asks (explain)
// or when it would be taken as the ceiling. A search for another platform reads only the pin: this
// machine's driver is not the target's.
func (f *Engine) probeDriver(full bool) *driver.Report {
	lookup := func(k string) (string, bool) { v := f.getenv(k); return v, v != "" }
	if !f.native() {
		return driver.Probe(context.Background(), driver.Options{Methods: []string{"override"}, LookupEnv: lookup})
	}
	methods := []string{"override", "sysfs", "procfs"}
	r := driver.Probe(context.Background(), driver.Options{Methods: methods, LookupEnv: lookup})
	if full || f.compat.forward || r.Setup == driver.SetupWSL2 && r.DriverVersion == "" {
		r = driver.Probe(context.Background(), driver.Options{Methods: append(methods, "userspace"), LookupEnv: lookup})
	}
	return r
}

// viewOf is the driver of report r as the check sees it.
func (f *Engine) viewOf(r *driver.Report) driverView {
	var v driverView
	switch {
	case r.DriverVersion == "" && !f.native():
		v.notes = []string{fmt.Sprintf("no driver check: the search is for %s, not this machine, and PATHFINDER_DRIVER_VERSION pins no driver", f.platform)}
	case r.DriverVersion == "":
		v.notes = []string{fmt.Sprintf("no driver check: %s (%s)", strings.TrimSuffix(r.Summary, "."), r.State)}
	case r.MaxCUDA == "":
		v.notes = []string{fmt.Sprintf("no driver check: driver %s is in no row of NVIDIA's table", r.DriverVersion)}
	default:
		v.known = true
		v.d = compat.Driver{Version: r.DriverVersion, MaxCUDA: r.MaxCUDA, Windows: f.platform.OS == "windows" || r.Setup == driver.SetupWSL2}
	}
	if fw, ok := forwardCompat(r, v.d.Windows); ok && v.known {
		if f.compat.forward {
			v.notes = append(v.notes, fmt.Sprintf("the forward-compatibility libcuda %s (driver %s) runs CUDA %s at most on the GPUs that support it; taken as the ceiling (%s=%s)", fw.path, fw.version, fw.maxCUDA, envDriverCompatibility, assumeForward))
			v.d.MaxCUDA = fw.maxCUDA
		} else {
			v.notes = append(v.notes, fmt.Sprintf("the forward-compatibility libcuda %s (driver %s) raises the ceiling to CUDA %s on the GPUs that support it (datacenter GPUs); %s=%s takes it as the ceiling", fw.path, fw.version, fw.maxCUDA, envDriverCompatibility, assumeForward))
		}
	}
	v.key = fmt.Sprintf("%s/%s/%v", v.d.Version, v.d.MaxCUDA, v.d.Windows)
	return v
}

// forwardLibcuda is a libcuda of NVIDIA's forward-compatibility package newer than the kernel module.
type forwardLibcuda struct{ path, version, maxCUDA string }

func forwardCompat(r *driver.Report, windows bool) (forwardLibcuda, bool) {
	for _, l := range r.UserSpace {
		if l.Soname != "libcuda.so.1" || !l.Compat || !l.Found() || l.Version == "" {
			continue
		}
		max, ok := driver.MaxCUDAFor(l.Version, windows)
		if ok && tables.CompareVersions(max, r.MaxCUDA) > 0 {
			return forwardLibcuda{l.Path, l.Version, max}, true
		}
	}
	return forwardLibcuda{}, false
}

// Compatibility is what the Engine's compatibility check knows: the mode of a library that sets none
// of its own, the driver, the CUDA answers must be of, and what it could not establish. It probes the
// driver, the cheap way, when no search has yet.
func (f *Engine) Compatibility() *search.CompatibilityTrace {
	mode := f.compat.mode
	if mode == "" {
		mode = f.cfg.Compatibility
	}
	if mode == "" {
		mode = compat.Strict
	}
	c := &checked{mode: mode, driver: f.driverView(), anchor: f.compat.pinned}
	f.state.mu.Lock()
	if c.anchor == nil {
		c.anchor = f.state.anchor
	}
	f.state.mu.Unlock()
	return c.trace()
}

// compatState is what the check remembers across an Engine's searches: the anchor and each dated
// answer, for the companions that must match it.
type compatState struct {
	mu      sync.Mutex
	anchor  *anchor
	answers map[string]answered // by kind and name
}

type answered struct {
	v    compat.Version
	path string
}

// modeFor is the mode of library e: the Engine's setting, else the config's for it, else strict.
func (f *Engine) modeFor(e *catalog.Entry) compat.Mode {
	switch {
	case f.compat.mode != "":
		return f.compat.mode
	case f.cfg.CompatibilityFor(e.Name) != "":
		return f.cfg.CompatibilityFor(e.Name)
	}
	return compat.Strict
}

// checked is one search's check: its mode, the driver, and what earlier answers set.
type checked struct {
	mode       compat.Mode
	driver     driverView
	anchor     *anchor
	companions map[string]answered // this library's companions answered before, by name
	kept       *keptCandidate      // strict: the first undated candidate, taken when no dated one runs
}

// checkFor is the check for one search of name; remembered says whether the Engine's earlier
// answers count (Explain searches as if there were none).
func (f *Engine) checkFor(kind Kind, name string, remembered bool) *checked {
	e, ok := f.catalog.Lookup(kind, name)
	if !ok {
		return &checked{mode: compat.Off}
	}
	c := &checked{mode: f.modeFor(e)}
	if c.mode == compat.Off || e.PackagedWith == "driver" {
		c.mode = compat.Off // the driver's own libraries are the driver: never checked against it
		return c
	}
	c.anchor = f.compat.pinned
	if !remembered {
		c.driver = f.driverViewFull()
		return c
	}
	c.driver = f.driverView()
	f.state.mu.Lock()
	defer f.state.mu.Unlock()
	if c.anchor == nil {
		c.anchor = f.state.anchor
	}
	for k, a := range f.state.answers {
		kind, name, _ := strings.Cut(k, "\x00")
		if f.companions(e, Kind(kind), name) {
			if c.companions == nil {
				c.companions = map[string]answered{}
			}
			c.companions[name] = a
		}
	}
	return c
}

// companions reports whether the answers of e and of the entry of kind called name must be of one
// CUDA major.minor: one name of two kinds (the nvrtc library and its headers), or one that names
// the other as its companion (libdevice's bitcode and nvvm).
func (f *Engine) companions(e *catalog.Entry, kind Kind, name string) bool {
	if name == e.Name {
		return kind != e.Kind
	}
	other, ok := f.catalog.Lookup(kind, name)
	return slices.Contains(e.Companions, name) || ok && slices.Contains(other.Companions, e.Name)
}

// key is what of the check a cached find's answer depends on.
func (c *checked) key() string {
	if c.mode == compat.Off {
		return "off"
	}
	k := string(c.mode) + "|" + c.driver.key
	if c.anchor != nil {
		k += fmt.Sprintf("|anchor %d", c.anchor.v.Major)
	}
	for _, name := range slices.Sorted(maps.Keys(c.companions)) {
		k += "|" + name + " " + c.companions[name].v.String()
	}
	return k
}

// trace is what the explanation shows of the check.
func (c *checked) trace() *search.CompatibilityTrace {
	if c.mode == compat.Off {
		return &search.CompatibilityTrace{Mode: search.CompatibilityOff}
	}
	t := &search.CompatibilityTrace{Mode: search.Compatibility(c.mode), Notes: c.driver.notes}
	if c.driver.known {
		t.Driver, t.MaxCUDA = c.driver.d.Version, c.driver.d.MaxCUDA
	}
	if c.anchor != nil {
		t.Anchor = c.anchor.String()
	}
	return t
}

// incompatibility is why a search found nothing that runs here: the driver and the CUDA it runs at
// most, then each candidate passed over with why.
func (c *checked) incompatibility(passed []search.CandidateTrace) string {
	parts := make([]string, len(passed))
	for i, p := range passed {
		parts[i] = fmt.Sprintf("%s (%s)", p.Path, p.Refused)
	}
	head := "nothing found runs here"
	if c.driver.known {
		head = fmt.Sprintf("driver %s runs CUDA %s at most", c.driver.d.Version, c.driver.d.MaxCUDA)
	}
	return head + "; passed over " + strings.Join(parts, ", ")
}

// installedBy says what installed a file of two of cuda.pathfinder's found_via labels: a wheel in a
// site-packages directory, a conda package in a conda env. A file found elsewhere may be of either,
// or of a toolkit: every source is asked.
var installedBy = map[string]cudaversion.Source{"site-packages": cudaversion.Wheel, "conda": cudaversion.Conda}

// judgement is the check's word on one candidate.
type judgement int

const (
	takeIt   judgement = iota
	keepBack           // strict: undated, taken only when no dated candidate runs
	passOver           // its CUDA does not run here: ct.Refused says why
)

// judge dates the candidate at path (links leading to real) and checks it: ct gets its CUDA and why.
func (r *cascade) judge(ct *search.CandidateTrace, path, real string) judgement {
	ans := cudaversion.Of(cudaversion.Artifact{Path: path, Real: real, Kind: r.e.Kind, Library: &r.e.Descriptor, Platform: r.f.platform,
		Install: installedBy[ct.FoundVia]}, r.rec)
	ct.CUDA, ct.Version, ct.VersionFrom = ans.CUDA, ans.Version, string(ans.From)
	ct.VersionDetail = ans.Detail
	if ans.CUDA == "" {
		ct.VersionDetail = "no source dates it: " + strings.Join(ans.Looked, "; ")
	}
	c := r.check
	if c == nil || c.mode == compat.Off { // nil: a run a test made by hand
		return takeIt
	}
	ct.Notes = append(ct.Notes, c.driver.notes...)
	v, err := compat.ParseVersion(ans.CUDA)
	switch {
	case err == nil:
	case !c.driver.known && c.anchor == nil && len(c.companions) == 0:
		return takeIt // nothing to check it against: the driver's note says so
	case c.mode == compat.Strict:
		return keepBack
	default:
		ct.Notes = append(ct.Notes, "not checked: no source says which CUDA it belongs to")
		return takeIt
	}
	if c.driver.known {
		verdict := c.driver.d.Check(v)
		if !verdict.Runs {
			ct.Refused, ct.Incompatible = verdict.Reason, true
			return passOver
		}
		ct.Compat = string(verdict.Compat)
		if verdict.Note != "" {
			ct.Notes = append(ct.Notes, verdict.Note)
		}
	}
	mismatch := c.anchor.mismatch(v)
	if mismatch == "" && v.HasMinor {
		mismatch = r.companionFiles(path, v)
	}
	for _, name := range slices.Sorted(maps.Keys(c.companions)) {
		a := c.companions[name]
		if mismatch == "" && a.v.HasMinor && v.HasMinor && (a.v.Major != v.Major || a.v.Minor != v.Minor) {
			mismatch = fmt.Sprintf("CUDA %s, but its companion %s came from CUDA %s (%s): companions are of one CUDA major.minor", v, name, a.v, a.path)
		}
	}
	switch {
	case mismatch == "":
		return takeIt
	case c.mode == compat.Strict:
		ct.Refused, ct.Incompatible = mismatch, true
		return passOver
	}
	ct.Notes = append(ct.Notes, "taken in best-effort mode: "+mismatch)
	return takeIt
}

// companionFiles says why the files the library loads from its own directory do not go with a
// candidate of CUDA v at path, or "": the directory holds such a file of another CUDA only (nvrtc
// 12.4 beside libnvrtc-builtins.so.12.6 alone fails at its first compile). A directory with none
// is no mismatch: what such a library lacks is not a question of versions.
func (r *cascade) companionFiles(path string, v compat.Version) string {
	if len(r.e.CompanionFiles) == 0 {
		return ""
	}
	entries, _ := r.rec.ReadDir(filepath.Dir(path))
	names := make([]string, len(entries))
	for i, de := range entries {
		names[i] = de.Name()
	}
	for _, pattern := range r.e.CompanionFiles {
		want := strings.Replace(pattern, "{cuda}", v.String(), 1)
		prefix, _, _ := strings.Cut(pattern, "{cuda}")
		others := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !strings.HasPrefix(n, prefix) })
		if len(others) > 0 && !slices.Contains(names, want) {
			return fmt.Sprintf("CUDA %s, but beside it are %s, not %s: it loads the one of its own CUDA", v, strings.Join(others, ", "), want)
		}
	}
	return ""
}

// keptCandidate is a strict search's first undated candidate, taken only when no dated one runs.
type keptCandidate struct {
	step, index int                                           // where its trace is in the explanation
	take        func(*search.StepTrace) *search.LoadedLibrary // takes it, as the step would have
	release     func()                                        // closes what take would have used
}

// keep records ct as kept back, and how to take it at the end of the search: only the first
// undated candidate is kept, the ones after it are passed over.
func (r *cascade) keep(st *search.StepTrace, ct search.CandidateTrace, take func(*search.StepTrace, search.CandidateTrace) *search.LoadedLibrary, release func()) {
	if r.check.kept != nil {
		ct.Refused = "no source says which CUDA it belongs to, and an earlier undated candidate is kept back already"
		st.Candidates = append(st.Candidates, ct)
		release()
		return
	}
	kept := ct
	kept.KeptBack = true
	kept.Refused = "kept back: no source says which CUDA it belongs to; taken only if no dated candidate runs"
	ct.Notes = append(ct.Notes, "taken although no source says which CUDA it belongs to: no dated candidate runs")
	r.check.kept = &keptCandidate{step: r.stepIndex, index: len(st.Candidates), release: release,
		take: func(st *search.StepTrace) *search.LoadedLibrary { return take(st, ct) }}
	st.Candidates = append(st.Candidates, kept)
}

// remember records a search's answer: the first dated one anchors the Engine, and each is a
// companion's for the searches after it.
func (f *Engine) remember(lib *search.Library) {
	e, ok := f.catalog.Lookup(abi.Kind(lib.Kind), lib.Name)
	v, err := compat.ParseVersion(lib.CUDA)
	if !ok || err != nil || e.PackagedWith == "driver" {
		return
	}
	f.state.mu.Lock()
	defer f.state.mu.Unlock()
	if f.state.anchor == nil {
		f.state.anchor = &anchor{v: v, name: e.Name, path: lib.Path}
	}
	if f.state.answers == nil {
		f.state.answers = map[string]answered{}
	}
	f.state.answers[string(e.Kind)+"\x00"+e.Name] = answered{v, lib.Path}
}
