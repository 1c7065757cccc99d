package host

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/host/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/host/internal/wasm"
)

// module returns the compiled module of plugin p, compiling it on first use, and the entry to call
// in it ("" for a plugin file, which registers one search).
func (f *Finder) module(ctx context.Context, p *pluginConfig) (*wasm.Module, string, error) {
	entry, isBuiltin := strings.CutPrefix(p.source, "builtin:")
	if !isBuiltin {
		entry = ""
	}
	f.mu.Lock()
	m := f.modules[p.name]
	f.mu.Unlock()
	if m != nil {
		return m, entry, nil
	}
	eng, err := f.wasmEngine()
	if err != nil {
		return nil, "", err
	}
	var code []byte
	if isBuiltin {
		code = builtin.StepsModule()
	} else if code, err = os.ReadFile(p.source); err != nil {
		return nil, "", fmt.Errorf("pathfinder: plugin %q: %w", p.name, err)
	}
	if p.sha256 != "" {
		sum := sha256.Sum256(code)
		if got := hex.EncodeToString(sum[:]); got != p.sha256 {
			return nil, "", fmt.Errorf("pathfinder: plugin %q: %s has sha256 %s, but the config (%s) pins %s", p.name, p.source, got, p.definedIn, p.sha256)
		}
	}
	if m, err = eng.Load(ctx, p.name, code, p.memory); err != nil {
		return nil, "", err
	}
	f.mu.Lock()
	f.modules[p.name] = m
	f.mu.Unlock()
	return m, entry, nil
}

func (f *Finder) wasmEngine() (*wasm.Engine, error) {
	f.engineOnce.Do(func() {
		f.engine, f.engineErr = wasm.NewEngine(f.cacheDir)
		if f.engineErr != nil { // an unusable cache dir costs speed, never the search
			f.cacheDir = ""
			f.engine, f.engineErr = wasm.NewEngine("")
		}
	})
	return f.engine, f.engineErr
}

// granted is what one plugin call may see: the mounts and env for the runtime, the roots for the
// request, and notes on grants that were refused.
type granted struct {
	wasm   wasm.Grants
	roots  []abi.Root
	mounts []grantedDir
	notes  []string
}

type grantedDir struct {
	path string
	root *os.Root
}

// grant resolves plugin p's env and read grants for library e.
func (f *Finder) grant(p *pluginConfig, e *catalog.Entry) (*granted, error) {
	g := &granted{wasm: wasm.Grants{Env: map[string]string{}}}
	for _, name := range expand(p.env, e) {
		if v := f.opts.getenv(name); v != "" {
			g.wasm.Env[name] = v
		}
	}
	add := func(dir, role string) {
		if dir == "" {
			return
		}
		if !filepath.IsAbs(dir) {
			g.notes = append(g.notes, fmt.Sprintf("not granted %q (%s): a relative path, never resolved against the working directory", dir, role))
			return
		}
		dir = filepath.Clean(dir)
		if slices.ContainsFunc(g.mounts, func(m grantedDir) bool { return m.path == dir }) {
			g.roots = append(g.roots, abi.Root{Path: dir, Role: role})
			return
		}
		root, err := f.openRoot(dir)
		if err != nil {
			g.notes = append(g.notes, fmt.Sprintf("not granted %s (%s): %v", dir, role, err))
			return
		}
		g.mounts = append(g.mounts, grantedDir{dir, root})
		g.wasm.Mounts = append(g.wasm.Mounts, wasm.Mount{Path: dir, FS: root.FS()})
		g.roots = append(g.roots, abi.Root{Path: dir, Role: role})
	}
	for _, r := range p.read {
		switch {
		case r == grantSitePackages:
			for _, s := range f.sitePackages() {
				add(s, abi.RoleSitePackages)
			}
		case r == grantInstallRoots:
			for _, v := range e.InstallRootEnvVars {
				add(f.opts.getenv(v), "env:"+v)
			}
		case strings.HasPrefix(r, "$"):
			add(f.opts.getenv(r[1:]), "env:"+r[1:])
		default:
			add(r, "")
		}
	}
	return g, nil
}

func expand(list []string, e *catalog.Entry) []string {
	var out []string
	for _, s := range list {
		if s == grantInstallRoots {
			out = append(out, e.InstallRootEnvVars...)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// openRoot opens dir as a confined root once per Finder: symlinks inside it cannot lead out.
func (f *Finder) openRoot(dir string) (*os.Root, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.roots[dir]; ok {
		return r, nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	if !fi.IsDir() {
		return nil, errors.New("not a directory")
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	f.roots[dir] = r
	return r, nil
}

// validate checks a candidate before anything uses it and returns why it is refused, or "".
func (g *granted) validate(p string, plat abi.Platform) string {
	switch {
	case p == "":
		return "empty path"
	case len(p) > 4096:
		return "path longer than 4096 bytes"
	case strings.ContainsRune(p, 0):
		return "path contains a NUL byte"
	case !path.IsAbs(p):
		return "not an absolute path"
	case path.Clean(p) != p:
		return fmt.Sprintf("not a clean path (clean: %s)", path.Clean(p))
	case slices.Contains(strings.Split(p, "/"), "stubs"):
		return "a stubs/ library: for linking only, never loaded"
	}
	var dir *grantedDir
	for i := range g.mounts {
		m := &g.mounts[i]
		if strings.HasPrefix(p, m.path+"/") && (dir == nil || len(m.path) > len(dir.path)) {
			dir = m
		}
	}
	if dir == nil {
		return "outside every directory granted to the step"
	}
	rel := strings.TrimPrefix(p, dir.path+"/")
	fi, err := dir.root.Stat(rel)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Sprintf("cannot stat inside %s: %v", dir.path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Sprintf("not a regular file (%s)", fi.Mode().Type())
	}
	file, err := dir.root.Open(rel)
	if err != nil {
		return err.Error()
	}
	defer file.Close()
	return checkELF(file, plat)
}

// checkELF refuses what the loader would refuse: not ELF, another class or machine, not a shared object.
func checkELF(r interface {
	ReadAt([]byte, int64) (int, error)
}, plat abi.Platform) string {
	ef, err := elf.NewFile(r)
	if err != nil {
		return "not an ELF file: " + strings.TrimPrefix(err.Error(), "elf: ")
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "ppc64le": elf.EM_PPC64, "riscv64": elf.EM_RISCV}[plat.Arch]
	switch {
	case ef.Class != elf.ELFCLASS64:
		return fmt.Sprintf("a %s library: this process is 64-bit", ef.Class)
	case want != 0 && ef.Machine != want:
		return fmt.Sprintf("built for %s, not %s", ef.Machine, plat.Arch)
	case ef.Type != elf.ET_DYN:
		return fmt.Sprintf("not a shared object (%s)", ef.Type)
	}
	return ""
}
