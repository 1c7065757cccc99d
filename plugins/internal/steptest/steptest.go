// Package steptest runs a first-party step's two forms over the same trees and requires the same
// answers: the C that ships in the builtin module (builtin.StepsModule, built from plugins/<name>/*.c)
// and the Go reference (the step's abi.Plugin). Each plugins/<name> calls MatchReference from its
// <name>_c_test.go, for every descriptor of the NVIDIA pack, every platform and the env cases the
// steps tell apart, comparing candidates, attempts and log lines.
package steptest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
)

// Platforms are the platforms every step is compared on.
var Platforms = platforms()

func platforms() []abi.Platform {
	var out []abi.Platform
	for _, t := range catalog.Targets {
		osName, arch, _ := strings.Cut(t, "/")
		out = append(out, abi.Platform{OS: osName, Arch: arch})
	}
	return out
}

// MatchReference compares the builtin module's p.Name with p over two random universes.
func MatchReference(t *testing.T, p abi.Plugin) {
	CheckModule(t, p.Name)
	Register(p)
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { compare(t, p.Name, seed) })
	}
}

var (
	registered   = map[string]bool{}
	registeredMu sync.Mutex
)

// Register registers p with abi once, so that Reference runs it as a Go guest would.
func Register(p abi.Plugin) {
	registeredMu.Lock()
	defer registeredMu.Unlock()
	if !registered[p.Name] {
		abi.Register(p)
		registered[p.Name] = true
	}
}

// CheckModule fails the test when a source the builtin module was built from changed since, or when
// a C file of the step is not one of them: the comparison would test another C than the one here.
func CheckModule(t testing.TB, step string) {
	t.Helper()
	if err := checkSources(filepath.Join("..", ".."), step); err != nil { // a step's tests run in plugins/<name>
		t.Fatal(err)
	}
}

func checkSources(root, step string) error {
	f, err := os.Open(filepath.Join(root, "builtin", "steps.wasm.sum"))
	if err != nil {
		return err
	}
	defer f.Close()
	listed := map[string]bool{}
	for s := bufio.NewScanner(f); s.Scan(); {
		hash, file, ok := strings.Cut(s.Text(), "  ")
		if !ok || file == "builtin/steps.wasm" {
			continue
		}
		listed[file] = true
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if sum := sha256.Sum256(data); err != nil || hex.EncodeToString(sum[:]) != hash {
			return fmt.Errorf("%s changed after builtin/steps.wasm was built: run go generate ./builtin", file)
		}
	}
	own, _ := filepath.Glob(filepath.Join(root, "plugins", step, "*.c"))
	if len(own) == 0 {
		return fmt.Errorf("plugins/%s holds no C: the builtin module has no %s step to compare", step, step)
	}
	for _, c := range own {
		if rel := "plugins/" + step + "/" + filepath.Base(c); !listed[rel] {
			return fmt.Errorf("%s is not in builtin/steps.wasm: run go generate ./builtin", rel)
		}
	}
	return nil
}

// kinds are the kinds of descriptors, in the order the tests go through them (so that a seed
// always builds the same universe).
var kinds = []abi.Kind{abi.KindDynamicLib, abi.KindHeaderDir, abi.KindBinary, abi.KindStaticLib, abi.KindBitcode}

// PackDescriptors returns every descriptor of the builtin pack with its kind.
func PackDescriptors(t testing.TB) map[abi.Kind][]abi.Descriptor {
	c, err := catalog.New(catalog.Pack{Name: "nvidia.toml", Data: builtin.NVIDIAPack()})
	if err != nil {
		t.Fatal(err)
	}
	out := map[abi.Kind][]abi.Descriptor{}
	for _, k := range kinds {
		out[k] = c.Descriptors(k)
	}
	return out
}

// compiled is shared by every Runtime of a test binary: the module is compiled once.
var compiled = wazero.NewCompilationCache()

// Runtime is the builtin module compiled, with the host functions a test controls.
type Runtime struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	universe string
	log      []string
	resolve  func(string) (string, error)
}

// NewRuntime returns a Runtime whose guests see universe, read-only.
func NewRuntime(t testing.TB, universe string) *Runtime {
	ctx := context.Background()
	r := &Runtime{rt: wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(compiled)), universe: universe}
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
	if r.compiled, err = r.rt.CompileModule(ctx, builtin.StepsModule()); err != nil {
		t.Fatal(err)
	}
	return r
}

// Guest is an instance of the module with one environment, the universe mounted read-only.
type Guest struct {
	*Runtime
	Module api.Module
}

// Guest instantiates the module with the variables env.
func (r *Runtime) Guest(t testing.TB, env map[string]string) Guest {
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithFSConfig(wazero.NewFSConfig().WithReadOnlyDirMount(r.universe, r.universe))
	for k, v := range env {
		cfg = cfg.WithEnv(k, v)
	}
	mod, err := r.rt.InstantiateModule(context.Background(), r.compiled, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return Guest{r, mod}
}

// Search runs one request in the guest and returns its response and log lines.
func (g Guest) Search(t testing.TB, req *abi.Request) (*abi.Response, []string) {
	g.log = nil
	in, _ := json.Marshal(req)
	out := g.Raw(t, in)
	var resp abi.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%s %s: response %q: %v", req.Step, req.Library.Name, out, err)
	}
	return &resp, g.log
}

// Raw sends the request bytes in and returns the response's bytes.
func (g Guest) Raw(t testing.TB, in []byte) []byte {
	ctx := context.Background()
	r, err := g.Module.ExportedFunction(abi.ExportAlloc).Call(ctx, uint64(len(in)))
	if err != nil {
		t.Fatal(err)
	}
	g.Module.Memory().Write(uint32(r[0]), in)
	r, err = g.Module.ExportedFunction(abi.ExportSearch).Call(ctx, r[0], uint64(len(in)))
	if err != nil {
		t.Fatalf("request %q: %v", in, err)
	}
	out, _ := g.Module.Memory().Read(uint32(r[0]>>32), uint32(r[0]))
	return out
}

// Reference runs the same request through the registered Go plugin, with the request and the
// response encoded as they cross between a Go guest and the host (invalid UTF-8 becomes U+FFFD).
func Reference(req *abi.Request, env map[string]string) (*abi.Response, []string) {
	var log []string
	e := abi.Env{FS: os.DirFS("/"), Getenv: func(k string) string { return env[k] },
		Logf: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }}
	var sent abi.Request
	b, _ := json.Marshal(req)
	json.Unmarshal(b, &sent)
	b, _ = json.Marshal(abi.Run(e, &sent))
	var resp abi.Response
	json.Unmarshal(b, &resp)
	return &resp, log
}

// Universe builds one tree holding every descriptor's files in a random selection of the places the
// steps look: site-packages, a conda prefix, a toolkit root, install roots, Program Files version
// trees; some as the older name, some as a directory, some in another case.
func Universe(t testing.TB, seed uint64) (dir string, env map[string]string) {
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
	descriptors := PackDescriptors(t)
	for _, kind := range kinds {
		for _, lib := range descriptors[kind] {
			for _, p := range Platforms {
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
	// Directories the steps list when they hold none of the names: one crowded past what an
	// attempt lists, one empty.
	os.MkdirAll(filepath.Join(dir, "cuda", "lib64"), 0o755)
	for i := range abi.MaxListed + 5 {
		os.WriteFile(filepath.Join(dir, "cuda", "lib64", fmt.Sprintf("README-%02d.txt", i)), nil, 0o644)
	}
	os.RemoveAll(filepath.Join(dir, "roots", "NCCL_HOME", "build", "lib"))
	os.MkdirAll(filepath.Join(dir, "roots", "NCCL_HOME", "build", "lib"), 0o755)
	// A symlink to a version directory, and a file where a version directory could be.
	os.MkdirAll(filepath.Join(dir, "pf/NVIDIA/CUDNN"), 0o755)
	os.Symlink("v9.9", filepath.Join(dir, "pf/NVIDIA/CUDNN/v9.11"))
	os.WriteFile(filepath.Join(dir, "pf/NVIDIA/CUDNN/v9.12"), nil, 0o644)
	return dir, env
}

func compare(t *testing.T, step string, seed uint64) {
	dir, full := Universe(t, seed)
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
	// A CUDA_HOME beside CUDA_PATH: through a link to its directory (not passed over), and beside a
	// relative CUDA_PATH (passed over).
	link := filepath.Join(dir, "cuda-link")
	if err := os.Symlink(full["CUDA_PATH"], link); err != nil {
		t.Fatal(err)
	}
	full["CUDA_HOME"], relative["CUDA_HOME"] = link, filepath.Join(dir, "conda")
	envs := []map[string]string{full, homeOnly, relative, {}}
	rt := NewRuntime(t, dir)
	var guests []Guest
	for _, env := range envs {
		guests = append(guests, rt.Guest(t, env))
	}

	// Roots of every role, each step taking its own: site-packages, one the config names, canary
	// roots (a toolkit, and a conda prefix laid out as one).
	roots := []abi.Root{{Path: path.Join(dir, "site1"), Role: abi.RoleSitePackages}, {Path: path.Join(dir, "other")},
		{Path: path.Join(dir, "cuda"), Role: abi.RoleCanaryRoot}, {Path: path.Join(dir, "site2"), Role: abi.RoleSitePackages},
		{Path: path.Join(dir, "conda"), Role: abi.RoleCanaryRoot}}
	calls, found := 0, 0
	descriptors := PackDescriptors(t)
	for _, kind := range kinds {
		for _, lib := range descriptors[kind] {
			for _, p := range Platforms {
				for e, env := range envs {
					req := &abi.Request{ABI: abi.Version, Step: step, Entry: step, Kind: kind, Platform: p, Library: lib, Roots: roots}
					if e == 3 {
						req.Roots = nil
					}
					want, wantLog := Reference(req, env)
					got, gotLog := guests[e].Search(t, req)
					calls++
					found += len(got.Candidates)
					if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotLog, wantLog) {
						t.Fatalf("%s %s %q on %s, env %d:\nC:  %+v\n    log %q\nGo: %+v\n    log %q", step, kind, lib.Name, p, e, got, gotLog, want, wantLog)
					}
				}
			}
		}
	}
	// Each step finds in few of the places it is asked about (programfiles: Windows descriptors
	// with Program Files globs only), but an empty universe would agree on everything.
	if found*40 < calls {
		t.Fatalf("only %d candidates in %d searches: the universe is too sparse to compare much", found, calls)
	}
	t.Logf("%d searches agree (%d candidates)", calls, found)
}

// PackLibrary returns the builtin pack's descriptor of kind and name.
func PackLibrary(t testing.TB, kind abi.Kind, name string) abi.Descriptor {
	t.Helper()
	for _, l := range PackDescriptors(t)[kind] {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("the builtin pack has no %s %q", kind, name)
	return abi.Descriptor{}
}

// WantBoth runs req through p (the Go reference) and through the builtin module's C of the same step,
// over the real tree under dir, and fails the test unless each proposes exactly want (paths relative
// to dir, in order). A step's table tests hold both forms to the same answer.
func WantBoth(t testing.TB, p abi.Plugin, dir string, env map[string]string, req *abi.Request, want []string) {
	t.Helper()
	CheckModule(t, p.Name)
	Register(p)
	req.ABI, req.Step, req.Entry = abi.Version, p.Name, p.Name
	paths := func(r *abi.Response) []string {
		var out []string
		for _, c := range r.Candidates {
			out = append(out, strings.TrimPrefix(c.Path, dir))
		}
		return out
	}
	ref, _ := Reference(req, env)
	got, _ := NewRuntime(t, dir).Guest(t, env).Search(t, req)
	if goGot, cGot := paths(ref), paths(got); !slices.Equal(goGot, want) || !slices.Equal(cGot, want) {
		t.Fatalf("Go %q\nC  %q\nwant %q", goGot, cGot, want)
	}
}

// Tree creates each of rels (slash-separated, relative) as a small file under a new directory, and
// returns the directory.
func Tree(t testing.TB, rels ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, rel := range rels {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
