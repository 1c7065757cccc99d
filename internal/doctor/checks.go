package doctor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
	"github.com/pathfinder-dev/pathfinder/internal/loadermodel"
	"github.com/pathfinder-dev/pathfinder/internal/report"
)

// Problem is one thing doctor found wrong, and what fixes it.
type Problem struct{ Title, Fix string }

// diagnostics run in this order over the gathered facts; each is one setup failure people hit.
var diagnostics = []func(*Facts) []Problem{
	checkDriver,
	checkStubLibcuda,
	checkCudartTooNew,
	checkMixedWheels,
	checkLDLibraryPathShadows,
	checkUnloadable,
	checkIgnoredInputs,
	checkCache,
	checkLoadedTwice,
}

// Diagnose lists the problems in d, check by check.
func Diagnose(d *Facts) []Problem {
	var out []Problem
	for _, check := range diagnostics {
		out = append(out, check(d)...)
	}
	return out
}

// checkDriver: a driver that does not work (not installed, not loaded, a kernel/user-space
// mismatch, no device access, not answering) is a problem, with the probe's own hint.
func checkDriver(d *Facts) []Problem {
	if d.Driver.Working() {
		return nil
	}
	title := d.Driver.Summary
	for _, in := range slices.Backward(d.Driver.Ignored) { // checkIgnoredInputs names each, with its fix
		title = strings.TrimSuffix(title, "; ignored "+search.IgnoredInput(in).String())
	}
	return []Problem{{Title: title, Fix: d.Driver.Hint}}
}

// checkStubLibcuda: the toolkit's stub libcuda (lib64/stubs) where programs look for the driver's
// makes every CUDA call fail with CUDA_ERROR_STUB_LIBRARY.
func checkStubLibcuda(d *Facts) []Problem {
	var out []Problem
	for _, dir := range absoluteDirs(d.Getenv("LD_LIBRARY_PATH")) {
		for _, name := range []string{"libcuda.so.1", "libcuda.so"} {
			p := filepath.Join(dir, name)
			if loadermodel.IsStub(filepath.ToSlash(p)) && fileExists(p) {
				out = append(out, Problem{
					Title: fmt.Sprintf("LD_LIBRARY_PATH holds the CUDA toolkit's stub libcuda (%s): programs that load libcuda from there fail with CUDA_ERROR_STUB_LIBRARY", p),
					Fix:   fmt.Sprintf("take %s off LD_LIBRARY_PATH: the stub is for linking only; at run time the driver's libcuda.so.1 must be found", dir),
				})
				break
			}
		}
	}
	for _, l := range d.Driver.UserSpace {
		if !l.Stub || l.Via == "LD_LIBRARY_PATH" {
			continue
		}
		p := Problem{
			Title: fmt.Sprintf("the loader finds the CUDA toolkit's stub for %s (%s, via %s): CUDA programs fail with CUDA_ERROR_STUB_LIBRARY", l.Soname, l.Path, l.Via),
			Fix:   fmt.Sprintf("remove %s from the loader's configuration (/etc/ld.so.conf.d) and run 'sudo ldconfig'", filepath.Dir(l.Path)),
		}
		if !loadermodel.IsStub(filepath.ToSlash(l.Path)) { // a link from a system directory into stubs/
			p.Title = fmt.Sprintf("%s (%s, via %s) leads to the CUDA toolkit's stub %s: CUDA programs fail with CUDA_ERROR_STUB_LIBRARY", l.Soname, l.Path, l.Via, l.RealPath)
			p.Fix = fmt.Sprintf("remove %s (and run 'sudo ldconfig'); the driver's own %s must be what the loader finds", l.Path, l.Soname)
		}
		out = append(out, p)
	}
	return out
}

// checkCudartTooNew: a cudart of a CUDA the driver does not run fails at its first call with
// cudaErrorInsufficientDriver. With the compatibility check on, find never answers one: then the
// problem is that nothing found runs (ErrIncompatible); with it off, the one it answered.
func checkCudartTooNew(d *Facts) []Problem {
	a := d.Library("cudart")
	r := d.Driver
	if a == nil || r.MaxCUDA == "" || r.DriverVersion == "" {
		return nil
	}
	maxMajor, _ := strconv.Atoi(strings.SplitN(r.MaxCUDA, ".", 2)[0])
	var se *engine.SearchError
	if errors.As(a.Err, &se) && errors.Is(se, engine.ErrIncompatible) {
		return []Problem{{Title: "cudart: " + se.Error(), Fix: fmt.Sprintf("install a CUDA %d runtime (for wheels, the -cu%d ones), or update the driver as the message says", maxMajor, maxMajor)}}
	}
	if a.Found == nil {
		return nil
	}
	major := cudaMajor(a.Found.Path)
	if major == 0 || maxMajor == 0 || major <= maxMajor {
		return nil
	}
	fix := fmt.Sprintf("use a CUDA %d runtime, or update the driver", maxMajor)
	if v := minDriverFor(major); v != "" {
		fix = fmt.Sprintf("update the driver to %s or newer (NVIDIA's table for CUDA %d), or use a CUDA %d runtime", v, major, maxMajor)
	}
	return []Problem{{
		Title: fmt.Sprintf("cudart %s is CUDA %d, newer than driver %s supports (CUDA %s at most): its first call fails with cudaErrorInsufficientDriver", a.Found.Path, major, r.DriverVersion, r.MaxCUDA),
		Fix:   fix,
	}}
}

// cudaMajor reads 13 from …/libcudart.so.13 (or its real file, libcudart.so.13.0.48) and from
// cudart64_13.dll; 0 when it cannot tell.
func cudaMajor(p string) int {
	var n int
	if i := strings.LastIndex(p, ".so."); i >= 0 {
		fmt.Sscanf(p[i+4:], "%d", &n)
	} else if i := strings.LastIndex(p, "cudart64_"); i >= 0 {
		fmt.Sscanf(p[i+9:], "%d", &n)
	}
	return n
}

// minDriverFor is the oldest Linux driver NVIDIA's table lists for any CUDA major.x release.
func minDriverFor(major int) string {
	rows, err := tables.CUDAReleases()
	if err != nil {
		return ""
	}
	var min string
	for _, row := range rows {
		if strings.HasPrefix(row.Toolkit, strconv.Itoa(major)+".") && (min == "" || tables.CompareVersions(row.MinLinuxDriver, min) < 0) {
			min = row.MinLinuxDriver
		}
	}
	return min
}

// checkMixedWheels: CUDA 12 wheels (nvidia/<component>/lib) and CUDA 13 wheels (nvidia/cu13/lib)
// holding the same toolkit libraries, where the library's descriptor says the wheels step looks,
// each file of the CUDA major the descriptor gives its name. cu13 comes first for every library, so a package built for
// CUDA 12 gets CUDA 13's.
func checkMixedWheels(d *Facts) []Problem {
	var both []string
	var where12, where13 []string
	for _, a := range d.Libraries {
		if a.Category != "ctk" {
			continue
		}
		var in12, in13 []string
		names, dirs := a.Descriptor.FileNames(d.Platform), a.Descriptor.SitePackagesDirs(d.Platform)
		for _, site := range d.Sites {
			for _, name := range names {
				for _, dir := range dirs {
					f := filepath.Join(site, dir, name)
					if !fileExists(f) {
						continue
					}
					switch a.Descriptor.CUDAMajors[name] {
					case "12":
						in12 = append(in12, f)
					case "13":
						in13 = append(in13, f)
					}
				}
			}
		}
		if len(in12) > 0 && len(in13) > 0 {
			both = append(both, a.Name)
			where12, where13 = appendNew(where12, in12[0]), appendNew(where13, in13[0])
		}
	}
	if len(both) == 0 {
		return nil
	}
	order := "the CUDA 13 ones come first for every library"
	if c := d.Compat; c.Mode != search.CompatibilityOff && c.MaxCUDA != "" && !strings.HasPrefix(c.MaxCUDA, "13.") {
		order = fmt.Sprintf("the CUDA 13 ones come first, and find passes over them, as driver %s runs CUDA %s at most", c.Driver, c.MaxCUDA)
	}
	return []Problem{{
		Title: fmt.Sprintf("CUDA 12 and CUDA 13 wheels are both installed, for %s: %s (CUDA 12) and %s (CUDA 13); %s",
			strings.Join(both, ", "), strings.Join(dirsOf(where12), ", "), strings.Join(dirsOf(where13), ", "), order),
		Fix: "keep one CUDA major version per environment: 'pip list | grep -i nvidia' shows both sets; uninstall the one your packages were not built for, or give each its own venv",
	}}
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// dirsOf is the distinct directories of files, in order.
func dirsOf(files []string) []string {
	var out []string
	for _, f := range files {
		out = appendNew(out, filepath.Dir(f))
	}
	return out
}

// checkLDLibraryPathShadows: a library pathfinder takes from a venv's wheels or a conda env that
// LD_LIBRARY_PATH also holds, another copy. Every load by name (dlopen, or a wheel's DT_NEEDED, which
// the loader searches in LD_LIBRARY_PATH before the wheel's own RUNPATH) gets that one instead.
func checkLDLibraryPathShadows(d *Facts) []Problem {
	shadowed := map[string][]string{} // LD_LIBRARY_PATH dir → "name (env copy)"
	var dirs []string
	for _, a := range d.Libraries {
		if a.Found == nil || a.Found.FoundVia != "site-packages" && a.Found.FoundVia != "conda" {
			continue
		}
		base := filepath.Base(a.Found.Path)
		for _, dir := range absoluteDirs(d.Getenv("LD_LIBRARY_PATH")) {
			other := filepath.Join(dir, base)
			if !loadableHere(other) {
				continue
			}
			if same, _ := sameFile(other, a.Found.Path); same {
				break // LD_LIBRARY_PATH points at the env's own copy
			}
			if len(shadowed[dir]) == 0 {
				dirs = append(dirs, dir)
			}
			shadowed[dir] = append(shadowed[dir], fmt.Sprintf("%s (%s over %s)", a.Name, other, a.Found.Path))
			break
		}
	}
	var out []Problem
	for _, dir := range dirs {
		out = append(out, Problem{
			Title: fmt.Sprintf("LD_LIBRARY_PATH shadows the environment's wheels: %s: every load by name, and the wheels' own dependencies, get the LD_LIBRARY_PATH copy", strings.Join(shadowed[dir], "; ")),
			Fix:   fmt.Sprintf("take %s off LD_LIBRARY_PATH in this environment: wheels find each other without it", dir),
		})
	}
	return out
}

// checkUnloadable: a library found where pathfinder looks that the loader would refuse, such as one
// built for a newer glibc than this system's.
func checkUnloadable(d *Facts) []Problem {
	var out []Problem
	for _, a := range d.Libraries {
		if a.Found == nil || a.Found.LoadProblem == "" {
			continue
		}
		out = append(out, Problem{
			Title: fmt.Sprintf("%s is found (%s, %s) but would not load: %s", a.Name, a.Found.Path, a.Found.FoundVia, a.Found.LoadProblem),
			Fix:   fmt.Sprintf("install a build of %s made for this system (for a wheel, one whose manylinux tag this glibc satisfies), or run on a newer system", a.Name),
		})
	}
	return out
}

// checkIgnoredInputs: a variable or setting the user set that pathfinder does not use, with why.
func checkIgnoredInputs(d *Facts) []Problem {
	var out []Problem
	for _, in := range d.Ignored {
		fix := "unset it, or correct it as the reason says"
		switch {
		case in.Why == report.Relative:
			fix = fmt.Sprintf("give %s an absolute path (pathfinder never resolves one against the working directory), or unset it", in.Name)
		case in.Name == "PATHFINDER_DRIVER_VERSION":
			fix = "unset it to probe the machine, or pin a version like 580.65.06"
		case in.Name == "CUDA_HOME" && in.Why == report.SetAside:
			fix = "point CUDA_PATH and CUDA_HOME at one toolkit, or unset the one you do not mean (other tools read CUDA_HOME first)"
		}
		out = append(out, Problem{Title: fmt.Sprintf("%s=%s is ignored: %s", in.Name, in.Value, in.Reason), Fix: fix})
	}
	return out
}

// checkLoadedTwice: two files of one library mapped into one process (doctor --pid). Symbols
// resolve to whichever came first, and the two copies do not share state.
func checkLoadedTwice(d *Facts) []Problem {
	if len(d.Maps) == 0 { // no --pid
		return nil
	}
	var out []Problem
	for _, a := range d.Libraries {
		var copies []string
		seen := map[string]bool{}
		names := a.Descriptor.FileNames(d.Platform)
		for _, m := range d.Maps {
			if !isFileOf(filepath.Base(m.Path), names) || seen[m.File] {
				continue
			}
			seen[m.File] = true
			copies = append(copies, m.Path)
		}
		if len(copies) > 1 {
			sort.Strings(copies)
			out = append(out, Problem{
				Title: fmt.Sprintf("process %d has %d copies of %s loaded: %s", d.PID, len(copies), a.Name, strings.Join(copies, ", ")),
				Fix:   fmt.Sprintf("make every part of the program load one %s: 'pathfinder explain %s' shows where pathfinder takes it; an LD_LIBRARY_PATH entry or a second wheel set usually brings the other", a.Name, a.Name),
			})
		}
	}
	return out
}

// isFileOf reports whether file is one of names or a versioned file behind one (libcudart.so.12 →
// libcudart.so.12.4.127), as /proc/PID/maps shows the real file.
func isFileOf(file string, names []string) bool {
	for _, n := range names {
		if file == n || strings.HasPrefix(file, n+".") && strings.Contains(n, ".so") {
			return true
		}
	}
	return false
}

// absoluteDirs splits a path list, keeping absolute entries: the loader would resolve the others
// against the working directory, which is nothing to diagnose from here.
func absoluteDirs(list string) []string {
	var out []string
	for _, d := range filepath.SplitList(list) {
		if filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

// loadableHere reports whether p is a shared object the loader of this process would take: a
// 64-bit ELF file for this machine (it passes over others and goes on to the next directory).
func loadableHere(p string) bool {
	f, err := binfmt.OpenELF(p)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Class == binfmt.Class64 && f.Machine == binfmt.MachineOf(runtime.GOARCH)
}

// checkCache: a cache that is off without being turned off, or that cannot be written, answers
// right but makes every run pay a cold search (and a compile): other commands stay quiet about it.
func checkCache(d *Facts) []Problem {
	const off = "PATHFINDER_NO_CACHE=1 turns it off on purpose"
	switch c := d.Cache; {
	case c.Dir == "" && !c.Disabled:
		return []Problem{{
			Title: "the cache is off: " + c.Off + "; every run searches (and compiles) afresh",
			Fix:   "set PATHFINDER_CACHE_DIR to an absolute path below a directory that exists and only you (or root) can write; " + off,
		}}
	case c.WriteError != "":
		return []Problem{{
			Title: fmt.Sprintf("the cache %s cannot be written: %s; every run searches (and compiles) afresh", c.Dir, c.WriteError),
			Fix:   "make room or make it writable, or set PATHFINDER_CACHE_DIR to a directory that is; " + off,
		}}
	}
	return nil
}
