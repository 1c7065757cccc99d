package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/compat"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// distInfo installs, beside files already under site, the dist-info pip writes for them: METADATA
// with the distribution's name and version, and a RECORD that lists each file.
func distInfo(t *testing.T, site, dist, version string, rels ...string) {
	t.Helper()
	info := strings.ReplaceAll(dist, "-", "_") + "-" + version + ".dist-info"
	var record strings.Builder
	for _, rel := range rels {
		fmt.Fprintf(&record, "%s,sha256=x,1\n", rel)
	}
	filetree.Put(t, site, info+"/METADATA", []byte(fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", dist, version)))
	filetree.Put(t, site, info+"/RECORD", []byte(record.String()))
}

// wheels is a site-packages with the cu13 and the cu12 runtime wheels, each with its dist-info, and
// an undated libcurand (no dist-info) beside a dated one further down the order.
func wheels(t *testing.T) string {
	t.Helper()
	site := t.TempDir()
	filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	distInfo(t, site, "nvidia-cuda-runtime", "13.0.96", "nvidia/cu13/lib/libcudart.so.13")
	filetree.Put(t, site, "nvidia/cuda_runtime/lib/libcudart.so.12", elfLib(t, "libcudart.so.12"))
	distInfo(t, site, "nvidia-cuda-runtime-cu12", "12.4.127", "nvidia/cuda_runtime/lib/libcudart.so.12")
	filetree.Put(t, site, "nvidia/cu13/lib/libnvrtc.so.13", elfLib(t, "libnvrtc.so.13"))
	distInfo(t, site, "nvidia-cuda-nvrtc", "13.0.88", "nvidia/cu13/lib/libnvrtc.so.13")
	filetree.Put(t, site, "nvidia/cuda_nvrtc/lib/libnvrtc.so.12", elfLib(t, "libnvrtc.so.12"))
	distInfo(t, site, "nvidia-cuda-nvrtc-cu12", "12.6.77", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
	return site
}

func TestCompatibility_driver(t *testing.T) {
	site := wheels(t)
	cu13, cu12 := filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13"), filepath.Join(site, "nvidia/cuda_runtime/lib/libcudart.so.12")
	for _, tt := range []struct {
		name, driver, mode string
		path, cuda, compat string
		passed             bool // the cu13 runtime was passed over
	}{
		{name: "550 runs 12.4", driver: "550.54.14", path: cu12, cuda: "12.4", compat: "full", passed: true},
		{name: "535 runs 12.4 by minor-version compatibility", driver: "535.104.05", path: cu12, cuda: "12.4", compat: "minor-version", passed: true},
		{name: "580 runs 13", driver: "580.65.06", path: cu13, cuda: "13.0", compat: "full"},
		{name: "best-effort is strict where versions are known", driver: "550.54.14", mode: "best-effort", path: cu12, cuda: "12.4", compat: "full", passed: true},
		{name: "off takes the first", driver: "550.54.14", mode: "off", path: cu13, cuda: "13.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_DRIVER_VERSION": tt.driver, "PATHFINDER_COMPATIBILITY": tt.mode}, "")
			lib, err := f.Find(bg, "cudart")
			if err != nil {
				t.Fatal(err)
			}
			if lib.Path != tt.path || lib.CUDA != tt.cuda || lib.Compat != tt.compat || (len(lib.PassedOver) > 0) != tt.passed {
				t.Fatalf("got %s, CUDA %q, compat %q, passed over %v", lib.Path, lib.CUDA, lib.Compat, lib.PassedOver)
			}
			if tt.passed && lib.PassedOver[0].Path != cu13 {
				t.Fatalf("passed over %v, want %s", lib.PassedOver, cu13)
			}
			if tt.compat == "minor-version" && !strings.Contains(strings.Join(lib.Notes, " "), "PTX") {
				t.Errorf("a minor-version answer's notes say nothing of PTX: %q", lib.Notes)
			}
		})
	}
}

func TestCompatibility_incompatible(t *testing.T) {
	site := t.TempDir()
	filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	distInfo(t, site, "nvidia-cuda-runtime", "13.0.96", "nvidia/cu13/lib/libcudart.so.13")
	for _, load := range []bool{false, true} {
		f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_DRIVER_VERSION": "550.54.14"}, "")
		var err error
		if load {
			_, err = f.Load(bg, "cudart")
		} else {
			_, err = f.Find(bg, "cudart")
		}
		var se *SearchError
		if !errors.As(err, &se) || !errors.Is(err, ErrIncompatible) || se.Code() != "incompatible" {
			t.Fatalf("load %v: %v, want incompatible", load, err)
		}
		for _, say := range []string{"driver 550.54.14 runs CUDA 12.4 at most", site + "/nvidia/cu13/lib/libcudart.so.13", "CUDA 13.0 needs 580.65.06"} {
			if !strings.Contains(err.Error(), say) {
				t.Errorf("load %v: %q does not say %q", load, err, say)
			}
		}
	}
}

// An undated candidate is kept back in strict mode: a dated one after it that runs wins; with none,
// it is the answer, with a note. best-effort takes it in order. (Each load is of a library of its
// own: a library this process has loaded is what later searches for it answer.)
func TestCompatibility_undated(t *testing.T) {
	site, root := t.TempDir(), t.TempDir()
	filetree.Put(t, root, "version.json", []byte(`{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}`))
	filetree.Put(t, site, "nvidia/curand/lib/libcurand.so.10", elfLib(t, "libcurand.so.10"))
	filetree.Put(t, root, "lib64/libcurand.so.10", elfLib(t, "libcurand.so.10"))
	// Loads are of libraries of a pack of the test's own: no other test may find them loaded.
	packs := filetree.Put(t, t.TempDir(), "kept.toml", []byte(string(pack("keptload", `site_packages_linux = ["pf/lib"]`, `anchor_rel_dirs_linux = ["lib64"]`))+"\n"+
		string(pack("keptalone", `site_packages_linux = ["pf/lib"]`))))
	for _, lib := range []string{"libkeptload.so.1", "libkeptalone.so.1"} {
		filetree.Put(t, site, "pf/lib/"+lib, elfLib(t, lib))
	}
	filetree.Put(t, root, "lib64/libkeptload.so.1", elfLib(t, "libkeptload.so.1"))
	for _, tt := range []struct {
		name, lib, mode, home string
		load                  bool
		path, cuda, note      string
	}{
		{"strict: the dated one after it", "curand", "", root, false, filepath.Join(root, "lib64/libcurand.so.10"), "12.4", ""},
		{"strict: the undated one when no dated one runs", "curand", "", "", false, filepath.Join(site, "nvidia/curand/lib/libcurand.so.10"), "", "no dated candidate runs"},
		{"best-effort: the first", "curand", "best-effort", root, false, filepath.Join(site, "nvidia/curand/lib/libcurand.so.10"), "", "not checked"},
		{"strict load: the dated one after it", "keptload", "", root, true, filepath.Join(root, "lib64/libkeptload.so.1"), "12.4", ""},
		{"strict load: the undated one when no dated one runs", "keptalone", "", "", true, filepath.Join(site, "pf/lib/libkeptalone.so.1"), "", "no dated candidate runs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_PACKS": packs, "CUDA_HOME": tt.home, "PATHFINDER_DRIVER_VERSION": "550.54.14", "PATHFINDER_COMPATIBILITY": tt.mode}, "")
			var lib *search.Library
			var err error
			if tt.load {
				var l *search.LoadedLibrary
				if l, err = f.Load(bg, tt.lib); err == nil {
					lib = &l.Library
				}
			} else {
				lib, err = f.Find(bg, tt.lib)
			}
			if err != nil {
				t.Fatal(err)
			}
			if lib.Path != tt.path || lib.CUDA != tt.cuda || !strings.Contains(strings.Join(lib.Notes, "; "), tt.note) {
				t.Fatalf("got %s, CUDA %q, notes %q; want %s, CUDA %q, a note with %q", lib.Path, lib.CUDA, lib.Notes, tt.path, tt.cuda, tt.note)
			}
		})
	}
}

// The first dated answer anchors the Engine: a later library of another CUDA major is passed over,
// in strict mode, for one of the anchor's.
func TestCompatibility_anchor(t *testing.T) {
	site := wheels(t)
	env := testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_DRIVER_VERSION": "580.65.06", "PATHFINDER_COMPATIBILITY": "", "PATHFINDER_CUDA": ""}
	f := newFinder(t, env, "")
	if _, err := f.Find(bg, "nvrtc"); err != nil { // cu13: 580 runs it
		t.Fatal(err)
	}
	lib, err := f.Find(bg, "cudart")
	if err != nil || !strings.HasSuffix(lib.Path, "cu13/lib/libcudart.so.13") {
		t.Fatalf("after nvrtc 13, cudart: %v %v", lib, err)
	}

	env["PATHFINDER_CUDA"] = "12"
	f = newFinder(t, env, "")
	lib, err = f.Find(bg, "cudart")
	if err != nil || lib.CUDA != "12.4" || len(lib.PassedOver) != 1 || !strings.Contains(lib.PassedOver[0].Reason, "the program is built for CUDA 12 ($PATHFINDER_CUDA)") {
		t.Fatalf("PATHFINDER_CUDA=12: %+v %v", lib, err)
	}
	if tr := f.Compatibility(); tr.Anchor != "CUDA 12 (the program's, $PATHFINDER_CUDA)" || tr.Driver != "580.65.06" || tr.MaxCUDA != "13.0" {
		t.Fatalf("Compatibility() = %+v", tr)
	}

	// best-effort takes another major than the anchor's, with a note.
	env["PATHFINDER_CUDA"], env["PATHFINDER_COMPATIBILITY"] = "", "best-effort"
	f = newFinder(t, env, "")
	f.state.anchor = &anchor{v: compat.Version{Major: 12, Minor: 4, HasMinor: true}, name: "cudart", path: "/x/libcudart.so.12"}
	lib, err = f.Find(bg, "nvrtc")
	if err != nil || lib.CUDA != "13.0" || !strings.Contains(strings.Join(lib.Notes, " "), "taken in best-effort mode: CUDA 13.0, but cudart already came from CUDA 12.4 (/x/libcudart.so.12)") {
		t.Fatalf("best-effort after an anchor of 12.4: %+v %v", lib, err)
	}
}

func TestCompatibility_settingsErrors(t *testing.T) {
	for _, tt := range []struct {
		env    testEnv
		config string
		says   string
	}{
		{testEnv{"PATHFINDER_COMPATIBILITY": "strickt"}, "", `$PATHFINDER_COMPATIBILITY: unknown compatibility mode "strickt" (strict, best-effort or off)`},
		{testEnv{"PATHFINDER_CUDA": "twelve"}, "", `$PATHFINDER_CUDA: "twelve" is not a CUDA version`},
		{testEnv{"PATHFINDER_DRIVER_COMPATIBILITY": "assume"}, "", `unknown value "assume" (default or assume-forward-compatibility)`},
		{nil, "[search]\ncompatibility = \"loose\"\n", `pathfinder.toml:2:1: search.compatibility: unknown compatibility mode "loose"`},
		{nil, "[library.cudart]\ncompatibility = \"offf\"\n", `library.cudart.compatibility: unknown compatibility mode "offf"`},
		{nil, "[library.cudartt]\ncompatibility = \"off\"\n", `[library.cudartt] names an unknown library`},
		{nil, "[search]\ncuda = \"12.x\"\n", `search.cuda: "12.x" is not a CUDA version`},
	} {
		env := tt.env
		if env == nil {
			env = testEnv{}
		}
		opts := Options{LookupEnv: env.lookup, SystemConfigDir: t.TempDir()}
		if tt.config != "" {
			opts.ConfigFile = filetree.Put(t, t.TempDir(), "pathfinder.toml", []byte(tt.config))
		}
		_, err := New(opts)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%v %q: %v, want a config error saying %q", tt.env, tt.config, err, tt.says)
		}
	}
}

// The mode, the driver and the anchor are inputs of a cached answer: one cache directory gives each
// pin its own answer, never another's.
func TestCompatibility_resultCache(t *testing.T) {
	site := wheels(t)
	cache := t.TempDir()
	for i, c := range []struct{ driver, mode, want string }{
		{"550.54.14", "", "cuda_runtime"}, {"580.65.06", "", "cu13"}, {"550.54.14", "", "cuda_runtime"},
		{"550.54.14", "off", "cu13"}, {"550.54.14", "", "cuda_runtime"},
	} {
		f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_CACHE_DIR": cache, "PATHFINDER_DRIVER_VERSION": c.driver, "PATHFINDER_COMPATIBILITY": c.mode}, "")
		lib, err := f.Find(bg, "cudart")
		if err != nil || !strings.Contains(lib.Path, "/"+c.want+"/") {
			t.Fatalf("run %d (driver %s, mode %q): %v %v, want the %s one", i, c.driver, c.mode, lib, err, c.want)
		}
		if repeat := i == 2 || i == 4; repeat && f.searches.Load() != 0 {
			t.Errorf("run %d repeats an earlier one but searched: its entry was not used", i)
		}
		f.Close()
	}
}

// Companions are of one CUDA major.minor: after nvvm from a CUDA 12.4 toolkit, libdevice is not taken
// from a CUDA 12.6 one that comes first, and the nvrtc headers follow nvrtc's toolkit the same way.
func TestCompatibility_companions(t *testing.T) {
	tk := func(version string) string {
		root := t.TempDir()
		filetree.Put(t, root, "version.json", []byte(`{"cuda": {"name": "CUDA SDK", "version": "`+version+`"}}`))
		filetree.Put(t, root, "nvvm/lib64/libnvvm.so.4", elfLib(t, "libnvvm.so.4"))
		filetree.Put(t, root, "nvvm/libdevice/libdevice.10.bc", []byte("BC\xc0\xde"))
		filetree.Put(t, root, "lib64/libnvrtc.so.12", elfLib(t, "libnvrtc.so.12"))
		filetree.Put(t, root, "include/nvrtc.h", nil)
		return root
	}
	cuda124, cuda126 := tk("12.4.1"), tk("12.6.3")
	for _, tt := range []struct{ lib, companion string }{{"nvvm", "device"}, {"nvrtc", "nvrtc"}} {
		t.Run(tt.companion, func(t *testing.T) {
			kind := Bitcode
			if tt.companion == "nvrtc" {
				kind = HeaderDir
			}
			// nvvm from CUDA_PATH's 12.4, then the companion with CUDA_PATH at 12.6: the same Engine
			// passes it over, a fresh one takes it.
			env := testEnv{"CUDA_PATH": cuda124, "PATHFINDER_DRIVER_VERSION": "580.65.06"}
			f := newFinder(t, env, "")
			if lib, err := f.Find(bg, tt.lib); err != nil || lib.CUDA != "12.4" {
				t.Fatalf("%s: %+v %v", tt.lib, lib, err)
			}
			env["CUDA_PATH"], env["CUDA_HOME"] = cuda126, ""
			_, err := f.FindKind(bg, kind, tt.companion)
			if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "CUDA 12.6, but its companion "+tt.lib+" came from CUDA 12.4 (") {
				t.Fatalf("%s after %s 12.4, with only 12.6 to find: %v", tt.companion, tt.lib, err)
			}
			if lib, err := newFinder(t, env, "").FindKind(bg, kind, tt.companion); err != nil || lib.CUDA != "12.6" {
				t.Fatalf("a fresh Engine: %+v %v", lib, err)
			}
		})
	}
}

// The mode: host.Options, else $PATHFINDER_COMPATIBILITY, else [library.NAME], else [search], else
// strict.
func TestCompatibility_precedence(t *testing.T) {
	site := wheels(t)
	for _, tt := range []struct {
		opts      search.Compatibility
		env, conf string
		want      string // the dir the answer is in: cu13 when nothing is checked
	}{
		{"", "", "", "cuda_runtime"},
		{"", "", "[search]\ncompatibility = \"off\"\n", "cu13"},
		{"", "", "[search]\ncompatibility = \"strict\"\n[library.cudart]\ncompatibility = \"off\"\n", "cu13"},
		{"", "strict", "[library.cudart]\ncompatibility = \"off\"\n", "cuda_runtime"},
		{search.CompatibilityOff, "strict", "", "cu13"},
		{search.CompatibilityStrict, "off", "[search]\ncompatibility = \"off\"\n", "cuda_runtime"},
	} {
		env := testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_DRIVER_VERSION": "550.54.14", "PATHFINDER_COMPATIBILITY": tt.env}
		opts := Options{LookupEnv: env.lookup, SystemConfigDir: t.TempDir(), Compatibility: tt.opts}
		if tt.conf != "" {
			opts.ConfigFile = filetree.Put(t, t.TempDir(), "pathfinder.toml", []byte(tt.conf))
		}
		f := newFinderOpts(t, opts)
		lib, err := f.Find(bg, "cudart")
		if err != nil || !strings.Contains(lib.Path, "/"+tt.want+"/") {
			t.Errorf("Options %q, $PATHFINDER_COMPATIBILITY %q, config %q: %v %v, want the %s one", tt.opts, tt.env, tt.conf, lib, err, tt.want)
		}
	}
}

// A forward-compatibility libcuda newer than the kernel module is named; taken as the ceiling only
// when asked, and then the CUDA 13 runtime runs on driver 550's module.
func TestCompatibility_forward(t *testing.T) {
	site := wheels(t)
	report := &driver.Report{State: driver.StateWorking, DriverVersion: "550.54.14", MaxCUDA: "12.4", Setup: driver.SetupNative,
		UserSpace: []driver.UserSpaceLibrary{{Soname: "libcuda.so.1", Path: "/usr/local/cuda-13.0/compat/libcuda.so.1",
			RealPath: "/usr/local/cuda-13.0/compat/libcuda.so.580.65.06", Version: "580.65.06", Compat: true}}}
	for _, assume := range []bool{false, true} {
		env := testEnv{"PATHFINDER_SITE_PACKAGES": site}
		f := newFinderOpts(t, Options{LookupEnv: env.lookup, SystemConfigDir: t.TempDir(), Driver: report, AssumeForwardCompatibility: assume})
		lib, err := f.Find(bg, "cudart")
		notes := strings.Join(f.Compatibility().Notes, " ")
		switch {
		case err != nil:
			t.Fatal(err)
		case !strings.Contains(notes, "the forward-compatibility libcuda /usr/local/cuda-13.0/compat/libcuda.so.1 (driver 580.65.06)"):
			t.Errorf("assume %v: the notes do not name it: %q", assume, notes)
		case assume && (lib.CUDA != "13.0" || f.Compatibility().MaxCUDA != "13.0"):
			t.Errorf("assumed: %s, CUDA %s, max %s; want the CUDA 13 runtime", lib.Path, lib.CUDA, f.Compatibility().MaxCUDA)
		case !assume && lib.CUDA != "12.4":
			t.Errorf("not assumed: %s, CUDA %s; want the CUDA 12 runtime", lib.Path, lib.CUDA)
		}
	}
	env := testEnv{envDriverCompatibility: assumeForward}
	if s, err := readCompatSettings(Options{}, env.get, ""); err != nil || !s.forward {
		t.Errorf("$%s=%s: %+v %v", envDriverCompatibility, assumeForward, s, err)
	}
}

// What no driver is checked against: a search for another platform with no driver pinned, and the
// driver's own libraries; Explain searches as a fresh process, with no anchor but a pinned one.
func TestCompatibility_unchecked(t *testing.T) {
	site := wheels(t)
	env := testEnv{"PATHFINDER_SITE_PACKAGES": site}
	f := newFinderOpts(t, Options{LookupEnv: env.lookup, SystemConfigDir: t.TempDir(), Platform: Platform{OS: "windows", Arch: "amd64"}})
	if notes := f.Compatibility().Notes; len(notes) != 1 || notes[0] != "no driver check: the search is for windows/amd64, not this machine, and PATHFINDER_DRIVER_VERSION pins no driver" {
		t.Errorf("--target windows/amd64: notes %q", notes)
	}

	libcuda := filetree.Put(t, t.TempDir(), "libcuda.so.1", elfLib(t, "libcuda.so.1"))
	g := newFinder(t, testEnv{"LD_LIBRARY_PATH": filepath.Dir(libcuda), "PATHFINDER_DRIVER_VERSION": "550.54.14"}, "")
	if lib, err := g.Find(bg, "cuda"); err != nil || lib.CUDAInfo.CUDA != "" || lib.Compat != "" || len(lib.Notes) != 0 {
		t.Errorf("the driver's libcuda: %+v %v; want it unchecked and undated", lib, err)
	}

	h := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_DRIVER_VERSION": "580.65.06"}, "")
	h.state.anchor = &anchor{v: compat.Version{Major: 12, Minor: 4, HasMinor: true}, name: "cudart", path: "/x/libcudart.so.12"}
	if ex := h.Explain(bg, DynamicLib, "nvrtc"); ex.Err != nil || !strings.Contains(ex.Result.Path, "/cu13/") || ex.Compatibility.Anchor != "" {
		t.Errorf("Explain with the Engine anchored at 12.4: %+v %v; want the cu13 nvrtc and no anchor", ex.Result, ex.Err)
	}
}

// nvrtc loads the builtins of its own CUDA from its directory: a dated nvrtc beside another CUDA's
// builtins alone is passed over in strict mode, for one beside its own.
func TestCompatibility_companionFiles(t *testing.T) {
	wrong, right := t.TempDir(), t.TempDir()
	for _, root := range []string{wrong, right} {
		filetree.Put(t, root, "version.json", []byte(`{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}`))
		filetree.Put(t, root, "lib64/libnvrtc.so.12", elfLib(t, "libnvrtc.so.12"))
	}
	filetree.Put(t, wrong, "lib64/libnvrtc-builtins.so.12.6", elfLib(t, "libnvrtc-builtins.so.12.6"))
	filetree.Put(t, right, "lib64/libnvrtc-builtins.so.12.4", elfLib(t, "libnvrtc-builtins.so.12.4"))
	f := newFinder(t, testEnv{"CUDA_PATH": wrong, "CUDA_HOME": right, "PATHFINDER_DRIVER_VERSION": "550.54.14"}, "[library.nvrtc]\norder = [\"envroots\", \"canary\"]\n")
	_, err := f.Find(bg, "nvrtc")
	if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "CUDA 12.4, but beside it are libnvrtc-builtins.so.12.6, not libnvrtc-builtins.so.12.4: it loads the one of its own CUDA") {
		t.Fatalf("nvrtc 12.4 beside the 12.6 builtins: %v", err)
	}
	f = newFinder(t, testEnv{"CUDA_PATH": right, "PATHFINDER_DRIVER_VERSION": "550.54.14"}, "")
	if lib, err := f.Find(bg, "nvrtc"); err != nil || lib.CUDA != "12.4" {
		t.Fatalf("nvrtc 12.4 beside its own builtins: %+v %v", lib, err)
	}
}
