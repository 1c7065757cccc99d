package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/canary"
	"github.com/pathfinder-dev/pathfinder/plugins/conda"
	"github.com/pathfinder-dev/pathfinder/plugins/envroots"
	"github.com/pathfinder-dev/pathfinder/plugins/programfiles"
	"github.com/pathfinder-dev/pathfinder/plugins/wheels"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// The builtin module is C; the Go packages under plugins/ are its reference. These tests run both
// over the same trees, for every descriptor of the NVIDIA pack, every platform and the env cases the
// steps tell apart, and require the same candidates, attempts and log lines.

func init() {
	for _, p := range []abi.Plugin{canary.Plugin, conda.Plugin, envroots.Plugin, programfiles.Plugin, wheels.Plugin} {
		abi.Register(p)
	}
}

var platforms = []abi.Platform{{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "arm64"}, {OS: "windows", Arch: "amd64"}, {OS: "windows", Arch: "arm64"}}

// packDescriptors returns every descriptor of the builtin pack with its kind.
func packDescriptors(t testing.TB) map[abi.Kind][]abi.Library {
	var pack struct {
		Library   []abi.Library `toml:"library"`
		Header    []abi.Library `toml:"header"`
		Binary    []abi.Library `toml:"binary"`
		StaticLib []abi.Library `toml:"static_lib"`
		Bitcode   []abi.Library `toml:"bitcode"`
	}
	if _, err := toml.Decode(string(NVIDIAPack()), &pack); err != nil {
		t.Fatal(err)
	}
	return map[abi.Kind][]abi.Library{abi.KindDynamicLib: pack.Library, abi.KindHeaderDir: pack.Header,
		abi.KindBinary: pack.Binary, abi.KindStaticLib: pack.StaticLib, abi.KindBitcode: pack.Bitcode}
}

// runtime is the builtin module compiled once, with the host functions a test controls.
type runtime struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	universe string
	log      []string
	resolve  func(string) (string, error)
}

func newRuntime(t testing.TB, universe string) *runtime {
	ctx := context.Background()
	r := &runtime{rt: wazero.NewRuntime(ctx), universe: universe}
	t.Cleanup(func() { r.rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r.rt)
	_, err := r.rt.NewHostModuleBuilder(abi.ImportModule).
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, ptr, n uint32) {
		b, _ := m.Memory().Read(ptr, n)
		r.log = append(r.log, string(b))
	}).Export(abi.ImportLog).
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, ptr, n, out, cap uint32) int32 {
		if r.resolve == nil {
			return abi.ResolveDenied
		}
		name, _ := m.Memory().Read(ptr, n)
		p, err := r.resolve(string(name))
		switch {
		case err == abi.ErrNotGranted:
			return abi.ResolveDenied
		case err != nil:
			return abi.ResolveNotFound
		case len(p) > int(cap):
			return abi.ResolveTooLong
		}
		m.Memory().Write(out, []byte(p))
		return int32(len(p))
	}).Export(abi.ImportSystemResolve).
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.compiled, err = r.rt.CompileModule(ctx, StepsModule()); err != nil {
		t.Fatal(err)
	}
	return r
}

// guest is an instance of the module with one environment, the universe mounted read-only.
type guest struct {
	*runtime
	mod api.Module
}

func (r *runtime) guest(t testing.TB, env map[string]string) guest {
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithFSConfig(wazero.NewFSConfig().WithReadOnlyDirMount(r.universe, r.universe))
	for k, v := range env {
		cfg = cfg.WithEnv(k, v)
	}
	mod, err := r.rt.InstantiateModule(context.Background(), r.compiled, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return guest{r, mod}
}

// search runs one request in the guest and returns its response and log lines.
func (g guest) search(t testing.TB, req *abi.Request, resolve func(string) (string, error)) (*abi.Response, []string) {
	g.log, g.resolve = nil, resolve
	in, _ := json.Marshal(req)
	out := rawSearch(t, g, in)
	var resp abi.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%s %s: response %q: %v", req.Step, req.Library.Name, out, err)
	}
	return &resp, g.log
}

// reference runs the same request through the Go package, with the request and the response encoded
// as they cross between a Go guest and the host (invalid UTF-8 becomes U+FFFD).
func reference(req *abi.Request, env map[string]string, resolve func(string) (string, error)) (*abi.Response, []string) {
	var log []string
	e := abi.Env{FS: os.DirFS("/"), Getenv: func(k string) string { return env[k] },
		Logf: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }, SystemResolve: resolve}
	var sent abi.Request
	b, _ := json.Marshal(req)
	json.Unmarshal(b, &sent)
	b, _ = json.Marshal(abi.Run(e, &sent))
	var resp abi.Response
	json.Unmarshal(b, &resp)
	return &resp, log
}

// universe builds one tree holding every descriptor's files in a random selection of the places the
// steps look: site-packages, a conda prefix, a toolkit root, install roots, Program Files version
// trees; some as the older name, some as a directory, some in another case.
func universe(t testing.TB, seed uint64) (dir string, env map[string]string) {
	dir = t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 1))
	env = map[string]string{
		"CONDA_PREFIX": filepath.Join(dir, "conda"), "CUDA_PATH": filepath.Join(dir, "cuda"),
		"ProgramW6432": filepath.Join(dir, "pf"),
	}
	write := func(p string, windows bool) {
		switch rng.IntN(6) {
		case 0:
			return
		case 1:
			os.MkdirAll(p, 0o755)
			return
		case 2:
			if windows {
				p = filepath.Join(filepath.Dir(p), strings.ToUpper(filepath.Base(p)))
			}
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	versions := []string{"v9.10", "v9.9", "v9.10.1", "v9.x-rc", "V9.8", "v9.9-rc1", "v10", "v9.010", "12.9", "12.8", "13.0", "x64", "arm64", "X64", "[odd]"}
	for kind, libs := range packDescriptors(t) {
		for _, lib := range libs {
			for _, p := range platforms {
				names := lib.FileNames(p)
				if len(names) == 0 {
					continue
				}
				win := p.OS == "windows"
				pick := func() string { return names[rng.IntN(len(names))] }
				var dirs []string
				for _, sub := range lib.SitePackagesDirs(p) {
					dirs = append(dirs, path.Join(dir, "site1", sub), path.Join(dir, "site2", sub))
				}
				for _, rel := range lib.CondaDirs(p) {
					dirs = append(dirs, path.Join(dir, "conda", rel))
				}
				for _, rel := range append(lib.AnchorDirs(p), lib.InstallRootRelDirs...) {
					dirs = append(dirs, path.Join(dir, "cuda", rel))
					for _, v := range lib.InstallRootEnvVars {
						env[v] = path.Join(dir, "roots", v)
						dirs = append(dirs, path.Join(dir, "roots", v, rel))
					}
				}
				for _, g := range lib.ProgramFilesDirs(p) {
					for range 3 {
						d := path.Join(dir, "pf")
						for _, seg := range strings.Split(g, "/") {
							if strings.ContainsAny(seg, "*?[") {
								for _, v := range rng.Perm(len(versions)) {
									if ok, _ := path.Match(seg, versions[v]); ok {
										seg = versions[v]
										break
									}
								}
							}
							d = path.Join(d, seg)
						}
						dirs = append(dirs, d)
					}
				}
				for _, d := range dirs {
					if kind == abi.KindHeaderDir {
						write(path.Join(d, pick()), false)
					} else {
						write(path.Join(d, pick()), win)
					}
				}
			}
		}
	}
	// A symlink to a version directory, and a file where a version directory could be.
	os.MkdirAll(filepath.Join(dir, "pf/NVIDIA/CUDNN"), 0o755)
	os.Symlink("v9.9", filepath.Join(dir, "pf/NVIDIA/CUDNN/v9.11"))
	os.WriteFile(filepath.Join(dir, "pf/NVIDIA/CUDNN/v9.12"), nil, 0o644)
	return dir, env
}

func TestStepsMatchReference(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { compareSteps(t, seed) })
	}
}

func compareSteps(t *testing.T, seed uint64) {
	dir, full := universe(t, seed)
	without := func(drop ...string) map[string]string {
		m := map[string]string{}
		for k, v := range full {
			m[k] = v
		}
		for _, k := range drop {
			delete(m, k)
		}
		return m
	}
	homeOnly := without("CUDA_PATH", "ProgramW6432")
	homeOnly["CUDA_HOME"] = full["CUDA_PATH"]
	homeOnly["ProgramFiles"] = full["ProgramW6432"]
	relative := without()
	relative["CONDA_PREFIX"], relative["CUDA_PATH"], relative["ProgramW6432"] = "conda", "cuda", "pf"
	envs := []map[string]string{full, homeOnly, relative, {}}
	rt := newRuntime(t, dir)
	var guests []guest
	for _, env := range envs {
		guests = append(guests, rt.guest(t, env))
	}

	cuda := filepath.Join(dir, "cuda")
	resolvers := map[string]func(string) (string, error){
		"lib64":     func(n string) (string, error) { return path.Join(cuda, "lib64", n), nil },
		"targets":   func(n string) (string, error) { return path.Join(cuda, "targets/x86_64-linux/lib", n), nil },
		"bin/x64":   func(n string) (string, error) { return path.Join(cuda, "bin/x64", n), nil },
		"no layout": func(n string) (string, error) { return path.Join(cuda, "share", n), nil },
		"root":      func(n string) (string, error) { return "/" + n, nil },
		"not found": func(string) (string, error) { return "", fmt.Errorf("the system loader would not find it") },
		"denied":    func(string) (string, error) { return "", abi.ErrNotGranted },
	}
	sites := []abi.Root{{Path: path.Join(dir, "site1"), Role: abi.RoleSitePackages}, {Path: path.Join(dir, "other")}, {Path: path.Join(dir, "site2"), Role: abi.RoleSitePackages}}
	calls, found := 0, 0
	for kind, libs := range packDescriptors(t) {
		for _, lib := range libs {
			for _, p := range platforms {
				for _, step := range steps {
					for e, env := range envs {
						rs := map[string]func(string) (string, error){"": nil}
						if step == "canary" && e == 0 {
							rs = resolvers
						}
						for rname, resolve := range rs {
							req := &abi.Request{ABI: abi.Version, Step: step, Entry: step, Kind: kind, Platform: p, Library: lib, Roots: sites}
							if e == 3 {
								req.Roots = nil
							}
							want, wantLog := reference(req, env, resolve)
							got, gotLog := guests[e].search(t, req, resolve)
							calls++
							found += len(got.Candidates)
							if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotLog, wantLog) {
								t.Fatalf("%s %s %q on %s, env %d, resolver %q:\nC:  %+v\n    log %q\nGo: %+v\n    log %q", step, kind, lib.Name, p, e, rname, got, gotLog, want, wantLog)
							}
						}
					}
				}
			}
		}
	}
	if found < calls/10 {
		t.Fatalf("only %d candidates in %d searches: the universe is too sparse to compare much", found, calls)
	}
	t.Logf("%d searches agree (%d candidates)", calls, found)
}

// TestStepsRequests: what the host never sends still gets an answer, never a trap.
func TestStepsRequests(t *testing.T) {
	g := newRuntime(t, t.TempDir()).guest(t, nil)
	for _, tt := range []struct{ req, want string }{
		{`{"abi":2,"step":"wheels"}`, "abi version mismatch: host 2, plugin 1"},
		{`{"abi":1,"step":"nope"}`, `no search named "nope" in this plugin (has canary, conda, envroots, programfiles, wheels)`},
		{`{"abi":1,"entry":"nope"}`, `no search named "nope" in this plugin`},
		{`{"abi":1,`, "bad request: "},
		{`[1,2]`, "bad request: "},
		{`{"abi":1} x`, "bad request: "},
		{``, "bad request: "},
	} {
		got := rawSearch(t, g, []byte(tt.req))
		var resp abi.Response
		if err := json.Unmarshal(got, &resp); err != nil || !strings.HasPrefix(resp.Error, tt.want) {
			t.Errorf("%s: got %s, want error %q", tt.req, got, tt.want)
		}
	}
}

func rawSearch(t testing.TB, g guest, in []byte) []byte {
	ctx := context.Background()
	r, err := g.mod.ExportedFunction(abi.ExportAlloc).Call(ctx, uint64(len(in)))
	if err != nil {
		t.Fatal(err)
	}
	g.mod.Memory().Write(uint32(r[0]), in)
	r, err = g.mod.ExportedFunction(abi.ExportSearch).Call(ctx, r[0], uint64(len(in)))
	if err != nil {
		t.Fatalf("request %q: %v", in, err)
	}
	out, _ := g.mod.Memory().Read(uint32(r[0]>>32), uint32(r[0]))
	return out
}

// FuzzStepsRequest: any request bytes get valid JSON back, never a trap.
func FuzzStepsRequest(f *testing.F) {
	req, _ := json.Marshal(abi.Request{ABI: 1, Step: "wheels", Entry: "wheels", Kind: abi.KindDynamicLib,
		Platform: abi.Platform{OS: "linux", Arch: "amd64"}, Library: abi.Library{Name: "cudart", LinuxSonames: []string{"libcudart.so.12"}, SitePackagesLinux: []string{"nvidia/cu13/lib"}},
		Roots: []abi.Root{{Path: "/nonexistent/site", Role: abi.RoleSitePackages}}})
	f.Add(req)
	f.Add([]byte(`{"abi":1,"entry":"programfiles","platform":{"os":"windows","arch":"amd64"},"library":{"name":"\u00e9\ud800","windows_dlls":["a\"b"],"program_files_dirs_windows":["[","x/*/[a-]"]}}`))
	f.Add([]byte(`{"abi":1,"entry":"canary","library":{"ctk_root_canary_anchor_libnames":["libcudart.so.12",""]}}`))
	g := newRuntime(f, f.TempDir()).guest(f, map[string]string{"ProgramW6432": "/nonexistent", "CONDA_PREFIX": "/x"})
	g.resolve = func(n string) (string, error) { return "/usr/local/cuda/lib64/" + n, nil }
	f.Fuzz(func(t *testing.T, in []byte) {
		if out := rawSearch(t, g, in); !json.Valid(out) {
			t.Fatalf("request %q: response %q is not JSON", in, out)
		}
	})
}

// FuzzProgramFilesMatchReference: random globs over random directory names order and match alike.
func FuzzProgramFilesMatchReference(f *testing.F) {
	f.Add("NVIDIA/CUDNN/v9.*/bin/*/{triple}", "v9.10\nv9.9\nV9.10-rc1\nv9.010\nbin\n12.9\nx64")
	f.Add("a/[^b]*/[a-c]?", "ab\nac\na\n[x]\nB1")
	f.Add("x/[", "x")
	dir := f.TempDir()
	rt := newRuntime(f, dir)
	n := 0
	f.Fuzz(func(t *testing.T, glob, names string) {
		if strings.IndexByte(glob, 0) >= 0 {
			return // the catalog refuses a descriptor with a NUL byte
		}
		n++
		root := filepath.Join(dir, fmt.Sprint(n))
		for i, name := range strings.Split(names, "\n") {
			// os.DirFS, under the reference, refuses names that are not UTF-8 outright; a WASI guest
			// gets the file system's own answer. That difference is the test's, not the steps'.
			if name == "" || strings.ContainsAny(name, "/\x00") || !utf8.ValidString(name) || name == "." || name == ".." || len(name) > 64 || i > 12 {
				continue
			}
			// Each name at each of the first levels, and the DLL in each.
			for _, d := range []string{name, "NVIDIA/" + name, "NVIDIA/CUDNN/" + name, "NVIDIA/CUDNN/" + name + "/bin/" + name} {
				os.MkdirAll(filepath.Join(root, d), 0o755)
				os.WriteFile(filepath.Join(root, d, "cudnn64_9.dll"), nil, 0o644)
			}
		}
		defer os.RemoveAll(root)
		env := map[string]string{"ProgramW6432": root}
		g := rt.guest(t, env)
		defer g.mod.Close(context.Background())
		req := &abi.Request{ABI: 1, Step: "programfiles", Entry: "programfiles", Kind: abi.KindDynamicLib, Platform: abi.Platform{OS: "windows", Arch: "amd64"},
			Library: abi.Library{Name: "cudnn", WindowsDLLs: []string{"cudnn64_9.dll"}, ProgramFilesDirsWindows: []string{glob, "NVIDIA/CUDNN/*"}}}
		want, wantLog := reference(req, env, nil)
		got, gotLog := g.search(t, req, nil)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotLog, wantLog) {
			t.Fatalf("glob %q over %q:\nC:  %+v %q\nGo: %+v %q", glob, names, got, gotLog, want, wantLog)
		}
	})
}
