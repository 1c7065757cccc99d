// Package wasm runs search plugins: WASI reactor modules compiled once per process (and cached on
// disk), instantiated per grant set with read-only mounts and an env allowlist, one call at a time per
// instance, under a memory cap and a per-call deadline.
package wasm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/bounded"
	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// ErrABIMismatch is returned when a plugin reports another ABI version than the host's.
var ErrABIMismatch = errors.New("plugin abi version mismatch")

// The bounds on a plugin are abi's (abi.MaxResponseBytes, abi.MaxLogLines, …): a runaway plugin
// cannot make the host allocate without limit, nor flood the trace. The log's bounds count what the
// guest logs and prints and what the host writes about it (a refused system_resolve) together.

// Compiling a module is part of the step that needs it, so it has that step's timeout: wazero
// cannot interrupt the compilation of a function, and some shapes cost time quadratic in their size
// (nested loops and one br_table: 0.5 s at 20 KB, 1.7 s at 40 KB here; docs/performance.md has the
// curve), so a compile still running at the timeout is given up, the module refused, and the
// refusal remembered (in the process, and in the cache dir) for every timeout as short: no later
// search of that bound compiles it again. The compile given up goes on in the background of this
// one process until it ends; a process that exits, as the pathfinder command does, ends it.

// Engine compiles and caches modules. It is safe for concurrent use.
type Engine struct {
	// CompileTimeout, when set, bounds compiling one module instead of the timeout Load is given:
	// tests whose verdict must not depend on the machine's speed lift it. It is read when a compile
	// starts: set it before the Loads it should bound, not while others run.
	CompileTimeout time.Duration
	// BeforeCompile, when set, runs before each compile, on the goroutine that compiles: tests hold
	// a compile past its bound, whatever the machine's speed. Set it as CompileTimeout.
	BeforeCompile func()
	// AfterFunc starts a call's deadline: expire, run once d has passed, ends the call as timed out;
	// stop, called when the call ends, reports whether it prevented that. nil means time.AfterFunc.
	// Tests end a call at the moment they choose, whatever the machine's speed. It is read when a
	// call (or Describe) starts: set it before the calls it should time, not while others run.
	AfterFunc func(d time.Duration, expire func()) (stop func() bool)
	// Entering, when set, is told each part of a call as it starts ("instantiating", "asking the
	// abi version", "allocating the request", "searching", "describing itself"), on the goroutine
	// that calls: tests expire the deadline in the part they mean to test. Set it as AfterFunc.
	Entering func(doing string)

	dir      string // the compilation cache, one sub-directory per module; "" for none
	mu       sync.Mutex
	modules  map[string]*compiling // by module hash and memory cap
	refused  map[string]refusal    // by module hash
	writeErr cachedir.FirstError   // the first error writing the cache dir met
}

// NewEngine returns an engine whose compilation cache lives in cacheDir ("" for none).
func NewEngine(cacheDir string) *Engine {
	return &Engine{dir: cacheDir, modules: map[string]*compiling{}, refused: map[string]refusal{}}
}

// Close releases every module and instance.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.modules {
		if c.mr != nil {
			c.mr.mu.Lock()
			c.mr.idle = map[string][]*instance{}
			c.mr.mu.Unlock()
			c.mr.rt.Close(context.Background())
			if c.mr.cache != nil {
				c.mr.cache.Close(context.Background())
			}
		}
	}
	e.modules = map[string]*compiling{}
	return nil
}

// Module is a compiled plugin module.
type Module struct {
	Hash string // sha256 of the module bytes, hex
	*moduleRuntime
	engine *Engine // whose clock the calls' deadlines run on
}

// moduleRuntime is a compiled module in its own runtime (the memory cap is a runtime setting), shared
// by every plugin name loaded from the same bytes with the same cap (the builtin steps, a plugin file
// that registers several searches).
type moduleRuntime struct {
	rt       wazero.Runtime
	cache    wazero.CompilationCache // nil without one; closed with the engine
	compiled wazero.CompiledModule
	mu       sync.Mutex
	idle     map[string][]*instance // by grant fingerprint
}

// Load compiles wasm (or finds it compiled) with a memory cap of memoryBytes, within timeout.
func (e *Engine) Load(ctx context.Context, wasm []byte, memoryBytes uint64, timeout time.Duration) (*Module, error) {
	if len(wasm) > abi.MaxModuleBytes {
		return nil, fmt.Errorf("a module of %d bytes is over the %d-byte limit", len(wasm), abi.MaxModuleBytes)
	}
	sum := sha256.Sum256(wasm)
	hash := hex.EncodeToString(sum[:])
	if why := e.refusal(hash, timeout); why != "" {
		return nil, errors.New(why)
	}
	if commandModule(wasm) {
		return nil, errors.New(e.refuse(hash, refusal{why: errCommand}))
	}
	pages := uint32(min(memoryBytes/abi.PageBytes, abi.MaxMemoryPages))
	key := fmt.Sprintf("%s/%d", hash, pages)
	// One compile per key; a slow module never holds up another plugin's first load.
	e.mu.Lock()
	c, ok := e.modules[key]
	if !ok {
		c = &compiling{}
		e.modules[key] = c
	}
	e.mu.Unlock()
	c.once.Do(func() {
		cache, done := e.moduleCache(hash)
		c.mr, c.err = e.compileBounded(ctx, hash, wasm, pages, cache, timeout)
		if _, ok := c.err.(abandoned); ok {
			return // the compile goes on, with the cache: it closes both when it ends
		}
		if c.err != nil && cache != nil {
			cache.Close(ctx)
			done(false)
			// The cache itself may be what failed (removed, unwritable, full): compile without it.
			if mr, err := e.compileBounded(ctx, hash, wasm, pages, nil, timeout); err == nil {
				e.writeErr.Note(c.err)
				c.mr, c.err = mr, nil
			}
		} else if c.err == nil {
			c.mr.cache = cache
			done(true)
		}
	})
	if c.err != nil {
		e.mu.Lock()
		if e.modules[key] == c {
			delete(e.modules, key) // a later Load may try again, unless refused
		}
		e.mu.Unlock()
		return nil, errors.New(printable.String(c.err.Error()))
	}
	return &Module{Hash: hash, moduleRuntime: c.mr, engine: e}, nil
}

// abandoned is why a compile was given up: the engine's CompileTimeout, or the caller's context.
type abandoned struct{ why string }

func (a abandoned) Error() string { return a.why }

// compileBounded is compile within timeout, or the engine's CompileTimeout where one is set (read
// at each compile). Past it the module is refused and the refusal remembered (refuse). The compile
// cannot be interrupted: it goes on in the background of this one process until it ends, and
// closes its runtime and cache then.
func (e *Engine) compileBounded(ctx context.Context, hash string, wasm []byte, pages uint32, cache wazero.CompilationCache, timeout time.Duration) (*moduleRuntime, error) {
	limit := timeout
	if e.CompileTimeout > 0 {
		limit = e.CompileTimeout
	}
	type result struct {
		mr  *moduleRuntime
		err error
	}
	ch := make(chan result, 1)
	var mu sync.Mutex
	gaveUp := false
	hold := e.BeforeCompile
	go func() {
		var mr *moduleRuntime
		var err error
		if hold != nil {
			hold()
		}
		func() {
			defer func() { // a failure inside the runtime fails this plugin, never the host process
				if r := recover(); r != nil {
					mr, err = nil, fmt.Errorf("the wasm compiler failed: %v", r)
				}
			}()
			mr, err = e.compile(context.WithoutCancel(ctx), wasm, pages, cache)
		}()
		mu.Lock()
		defer mu.Unlock()
		if gaveUp {
			if mr != nil {
				mr.rt.Close(context.Background())
			}
			if cache != nil {
				cache.Close(context.Background())
			}
			return
		}
		ch <- result{mr, err}
	}()
	timer := time.NewTimer(max(limit, 0))
	defer timer.Stop()
	slow := false
	select {
	case r := <-ch:
		return r.mr, r.err
	case <-timer.C:
		slow = true
	case <-ctx.Done(): // the caller gave up: not the module's doing, so not remembered
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case r := <-ch: // it ended just now
		return r.mr, r.err
	default:
	}
	gaveUp = true
	if !slow {
		return nil, abandoned{"compiling: " + ctx.Err().Error()}
	}
	return nil, abandoned{e.refuse(hash, refusal{limit: limit,
		why: fmt.Sprintf("refused: compiling it took over %v, the step's timeout (a module this costly to compile is never run)", limit.Round(time.Millisecond))})}
}

// compiling is a module being compiled, or compiled, once.
type compiling struct {
	once sync.Once
	mr   *moduleRuntime
	err  error
}

func (e *Engine) compile(ctx context.Context, wasm []byte, pages uint32, cache wazero.CompilationCache) (*moduleRuntime, error) {
	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(pages).WithCloseOnContextDone(true)
	if cache != nil {
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	_, err := rt.NewHostModuleBuilder(abi.ImportModule).
		NewFunctionBuilder().WithFunc(hostLog).Export(abi.ImportLog).
		NewFunctionBuilder().WithFunc(hostSystemResolve).Export(abi.ImportSystemResolve).
		Instantiate(ctx)
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("not a valid wasm module: %w", err)
	}
	for _, ex := range []string{abi.ExportVersion, abi.ExportAlloc, abi.ExportSearch} {
		if _, ok := compiled.ExportedFunctions()[ex]; !ok {
			rt.Close(ctx)
			return nil, fmt.Errorf("missing export %q (is it built with -buildmode=c-shared for ABI %d?)", ex, abi.Version)
		}
	}
	// The host reads and writes the guest's memory: a module without one would crash the host.
	if _, ok := compiled.ExportedMemories()["memory"]; !ok {
		rt.Close(ctx)
		return nil, fmt.Errorf("missing export %q (a WASI module exports its memory)", "memory")
	}
	return &moduleRuntime{rt: rt, compiled: compiled, idle: map[string][]*instance{}}, nil
}

// Mount is a granted directory: its host path, the path the guest sees it at, and the confined root
// behind it. What the guest does in it is recorded under the host path.
type Mount struct {
	Path  string // the host path
	Guest string // the guest path (internal/guestpath); "" for Path itself, as on a Unix host
	Root  *os.Root
}

// guestPath is where the guest sees m.
func (m Mount) guestPath() string {
	if m.Guest != "" {
		return m.Guest
	}
	return m.Path
}

// Grants is what one instance may see. Instances are reused only for identical grants.
type Grants struct {
	Mounts []Mount
	Env    map[string]string
	// SystemResolve answers the plugin's system_resolve calls; nil denies them. It is per call, not
	// part of the instance.
	SystemResolve func(name string) (string, error)
	// Record receives every file observation the call makes; nil records nothing. Per call.
	Record *observe.Recorder
}

func (g Grants) fingerprint() string {
	var b strings.Builder
	for _, m := range g.Mounts {
		// The root's identity too: a directory deleted and made again is a new root, and an
		// instance still holding the old one must not serve it.
		fmt.Fprintf(&b, "m\x00%s\x00%s\x00%p\x00", m.Path, m.guestPath(), m.Root)
	}
	keys := make([]string, 0, len(g.Env))
	for k := range g.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("e\x00" + k + "=" + g.Env[k] + "\x00")
	}
	return b.String()
}

type instance struct {
	mounts         []*sandboxfs.RootFS
	mod            api.Module
	alloc, search  api.Function
	stdout, stderr bounded.Buffer // the first abi.MaxOutputBytes bytes a guest prints; the rest is dropped
}

// callState travels in the call's context so host functions know whose log they write and what
// the call may ask of the host.
type callState struct {
	mu       sync.Mutex
	log      []string
	logBytes int
	dropped  int                               // lines over the bound, not kept
	resolve  func(name string) (string, error) // nil: system_resolve not granted
}

// addLog keeps line, escaped, within the call's log bound; what is over it is only counted.
func (st *callState) addLog(line string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	line = printable.String(line)
	if len(st.log) >= abi.MaxLogLines || st.logBytes+len(line) > abi.MaxLogBytes {
		st.dropped++
		return
	}
	st.log = append(st.log, line)
	st.logBytes += len(line)
}

// lines is the call's log, with a last line saying how many were dropped.
func (st *callState) lines() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.dropped == 0 {
		return st.log
	}
	return append(st.log, fmt.Sprintf("(%d more log lines dropped: a call keeps %d lines, %d KiB)", st.dropped, abi.MaxLogLines, abi.MaxLogBytes>>10))
}

type stateKey struct{}

// hostSystemResolve answers the system_resolve import for a granted plugin: the path is written at
// out, its length returned; a code of abi.Resolve* otherwise.
func hostSystemResolve(ctx context.Context, m api.Module, namePtr, nameLen, out, outCap uint32) int32 {
	st, _ := ctx.Value(stateKey{}).(*callState)
	if st == nil || st.resolve == nil {
		return abi.ResolveDenied
	}
	name, ok := m.Memory().Read(namePtr, min(nameLen, abi.MaxResolveName))
	if !ok {
		return abi.ResolveNotFound
	}
	p, err := st.resolve(string(name))
	if err != nil {
		st.addLog(fmt.Sprintf("system_resolve(%q): %v", name, err))
		return abi.ResolveNotFound
	}
	if len(p) > int(outCap) {
		return abi.ResolveTooLong
	}
	if !m.Memory().Write(out, []byte(p)) {
		return abi.ResolveNotFound
	}
	return int32(len(p))
}

func hostLog(ctx context.Context, m api.Module, ptr, size uint32) {
	st, _ := ctx.Value(stateKey{}).(*callState)
	if st == nil {
		return
	}
	if b, ok := m.Memory().Read(ptr, min(size, abi.MaxLogLineBytes)); ok {
		st.addLog(string(b))
	}
}

func (m *Module) instantiate(ctx context.Context, g Grants) (*instance, error) {
	inst := &instance{stdout: bounded.Buffer{Limit: abi.MaxOutputBytes}, stderr: bounded.Buffer{Limit: abi.MaxOutputBytes}}
	fsc := wazero.NewFSConfig()
	for _, mt := range g.Mounts {
		rfs := sandboxfs.NewRootFS(mt.Root, mt.Path)
		inst.mounts = append(inst.mounts, rfs)
		fsc = fsc.WithFSMount(rfs, mt.guestPath())
	}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithFSConfig(fsc).
		WithStdout(&inst.stdout).
		WithStderr(&inst.stderr)
	for k, v := range g.Env {
		cfg = cfg.WithEnv(k, v)
	}
	const doing = "instantiating"
	m.entering(doing)
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, cfg)
	if err != nil {
		return nil, m.explain(ctx, err, doing, inst)
	}
	inst.mod = mod
	inst.alloc = mod.ExportedFunction(abi.ExportAlloc)
	inst.search = mod.ExportedFunction(abi.ExportSearch)
	return inst, nil
}

// checkVersion asks a new instance its ABI version, within the call's deadline.
func (m *Module) checkVersion(ctx context.Context, inst *instance) error {
	const doing = "asking the abi version"
	m.entering(doing)
	res, err := inst.mod.ExportedFunction(abi.ExportVersion).Call(ctx)
	if err != nil {
		return m.explain(ctx, err, doing, inst)
	}
	if v := int32(res[0]); v != abi.Version {
		return fmt.Errorf("%w: %s", ErrABIMismatch, abi.VersionAdvice(int(v)))
	}
	return nil
}

// Result is one call's outcome besides the response bytes.
type Result struct {
	Log    []string // what the guest logged and printed
	Reused bool     // an idle instance served the call
}

// Call runs one search with the given grants. A trap, a timeout or a bad reply fails the call and
// throws the instance away; the module stays usable.
func (m *Module) Call(ctx context.Context, g Grants, req []byte, timeout time.Duration) (out []byte, res Result, err error) {
	// Whatever goes wrong inside the runtime fails this step, never the host process.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the wasm runtime failed: %v", r)
		}
	}()
	fp := g.fingerprint()
	m.mu.Lock()
	var inst *instance
	if pool := m.idle[fp]; len(pool) > 0 {
		inst = pool[len(pool)-1]
		m.idle[fp] = pool[:len(pool)-1]
		res.Reused = true
	}
	m.mu.Unlock()

	st := &callState{resolve: g.SystemResolve}
	ctx = context.WithValue(ctx, stateKey{}, st)
	// One deadline for all the call costs: a start function or _initialize that loops is stopped
	// at the plugin's timeout like a search that loops.
	ctx, cancel := m.engine.withDeadline(ctx, timeout)
	defer cancel()
	if inst == nil {
		var err error
		if inst, err = m.instantiate(ctx, g); err != nil {
			return nil, res, err
		}
	}
	if !res.Reused {
		if err := m.checkVersion(ctx, inst); err != nil {
			inst.mod.Close(context.Background())
			return nil, res, err
		}
	}
	for _, rfs := range inst.mounts {
		rfs.Record(g.Record, st.addLog)
	}
	out, err = m.call(ctx, inst, req)
	for _, rfs := range inst.mounts {
		rfs.Record(nil, nil)
	}
	for _, l := range inst.output() {
		st.addLog(l)
	}
	res.Log = st.lines()
	if err != nil {
		inst.mod.Close(context.Background())
		return nil, res, err
	}
	m.mu.Lock()
	if len(m.idle[fp]) < abi.MaxIdleInstances {
		m.idle[fp] = append(m.idle[fp], inst)
		inst = nil
	}
	m.mu.Unlock()
	if inst != nil {
		inst.mod.Close(context.Background())
	}
	return out, res, nil
}

func (m *Module) call(ctx context.Context, inst *instance, req []byte) ([]byte, error) {
	doing := "allocating the request"
	m.entering(doing)
	r, err := inst.alloc.Call(ctx, uint64(len(req)))
	if err != nil {
		return nil, m.explain(ctx, err, doing, inst)
	}
	ptr := uint32(r[0])
	if !inst.mod.Memory().Write(ptr, req) {
		return nil, fmt.Errorf("allocator returned %#x, outside its memory", ptr)
	}
	doing = "searching"
	m.entering(doing)
	r, err = inst.search.Call(ctx, uint64(ptr), uint64(len(req)))
	if err != nil {
		return nil, m.explain(ctx, err, doing, inst)
	}
	rptr, rlen := uint32(r[0]>>32), uint32(r[0])
	if rlen > abi.MaxResponseBytes {
		return nil, fmt.Errorf("response of %d bytes is over the %d-byte limit", rlen, abi.MaxResponseBytes)
	}
	b, ok := inst.mod.Memory().Read(rptr, rlen)
	if !ok {
		return nil, fmt.Errorf("response at %#x+%d is outside its memory", rptr, rlen)
	}
	if !json.Valid(b) { // and the instance that said it is not trusted again
		return nil, errors.New("unreadable response: not JSON")
	}
	return bytes.Clone(b), nil
}

// withDeadline is ctx ended by timeout on the engine's clock. Its cause, and not its Err (which
// says canceled), is then context.DeadlineExceeded: a timer outside the context cannot set Err.
func (e *Engine) withDeadline(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	afterFunc := e.AfterFunc
	if afterFunc == nil {
		afterFunc = func(d time.Duration, expire func()) func() bool { return time.AfterFunc(d, expire).Stop }
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := afterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// entering tells the engine's Entering hook, if any, that a part of a call starts.
func (m *Module) entering(doing string) {
	if h := m.engine.Entering; h != nil {
		h(doing)
	}
}

// explain turns a wazero error into a message that says what the plugin did. wazero reports a
// deadline and a cancellation as exit codes a guest can also pass to proc_exit, so only the call's
// own context says which it was, and its cause says why it ended: the call's deadline cancels it
// with context.DeadlineExceeded as the cause, which wazero reports as a cancellation.
func (m *Module) explain(ctx context.Context, err error, doing string, inst *instance) error {
	return errors.New(printable.String(m.explainText(ctx, err, doing, inst)))
}

func (m *Module) explainText(ctx context.Context, err error, doing string, inst *instance) string {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		if code := exit.ExitCode(); (code == sys.ExitCodeDeadlineExceeded || code == sys.ExitCodeContextCanceled) && ctx.Err() != nil {
			// Err for the caller's own deadline, the cause for the call's.
			if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				return fmt.Sprintf("timed out while %s", doing)
			}
			return fmt.Sprintf("canceled while %s", doing)
		}
		msg := fmt.Sprintf("exited with code %d while %s", int32(exit.ExitCode()), doing)
		if why := guestFatal(inst.stderr.String()); why != "" {
			msg += ": " + why
		} else if tail := lastLine(inst.stderr.String()); tail != "" {
			msg += ": " + tail
		}
		return msg
	}
	msg := err.Error()
	if i := strings.Index(msg, "\n"); i >= 0 {
		msg = msg[:i] // drop wazero's wasm stack trace
	}
	// A Go guest panics or runs out of memory by printing why and trapping: say why first.
	if why := guestFatal(inst.stderr.String()); why != "" {
		return fmt.Sprintf("trapped while %s: %s (%s)", doing, why, msg)
	}
	return fmt.Sprintf("trapped while %s: %s", doing, msg)
}

// guestFatal is the line in which a guest runtime said why it stopped (Go: "panic: ...",
// "fatal error: ..."), cut to 512 bytes, or "".
func guestFatal(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return strings.ToValidUTF8(l[:min(len(l), 512)], "\uFFFD")
		}
	}
	return ""
}

func (inst *instance) output() []string {
	var lines []string
	for _, buf := range []*bounded.Buffer{&inst.stdout, &inst.stderr} {
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
		buf.Reset()
	}
	return lines
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "goroutine ") {
			return l
		}
	}
	return ""
}

// Describe calls the optional describe export in a fresh instance with no grants; a module without
// it describes itself as nil.
func (m *Module) Describe(ctx context.Context, timeout time.Duration) (*abi.Description, error) {
	if _, ok := m.compiled.ExportedFunctions()[abi.ExportDescribe]; !ok {
		return nil, nil
	}
	ctx, cancel := m.engine.withDeadline(ctx, timeout)
	defer cancel()
	inst, err := m.instantiate(ctx, Grants{})
	if err != nil {
		return nil, err
	}
	defer inst.mod.Close(context.Background())
	if err := m.checkVersion(ctx, inst); err != nil {
		return nil, err
	}
	const doing = "describing itself"
	m.entering(doing)
	r, err := inst.mod.ExportedFunction(abi.ExportDescribe).Call(ctx)
	if err != nil {
		return nil, m.explain(ctx, err, doing, inst)
	}
	b, ok := inst.mod.Memory().Read(uint32(r[0]>>32), min(uint32(r[0]), abi.MaxResponseBytes))
	if !ok {
		return nil, errors.New("description outside its memory")
	}
	var d abi.Description
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("bad description: %s", printable.String(err.Error()))
	}
	// What a plugin says about itself is printed (pathfinder plugins): never raw.
	d.Version = printable.String(d.Version)
	for _, list := range [][]string{d.Names, d.Env} {
		for i := range list {
			list[i] = printable.String(list[i])
		}
	}
	return &d, nil
}
