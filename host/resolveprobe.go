package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pathfinder-dev/pathfinder/host/internal/child"
	"github.com/pathfinder-dev/pathfinder/host/internal/loader"
)

// The dlopen probe ([system] resolve = "dlopen"): the OS loader itself says where it finds a canary.
// The library is loaded in a child process (host/internal/child: this program re-executed in the
// role childResolveProbe), so its constructors, and whatever it drags in, never touch this process.
// ChildMain, first in main, answers there with one JSON object and exits.
const (
	childResolveProbe = "resolve-probe"
	envResolveNames   = "PATHFINDER_INTERNAL_RESOLVE_NAMES" // a JSON array of file names to dlopen, newest first
	resolveMagic      = "pathfinder resolve-probe 1"
)

// resolveAnswer is what the child prints.
type resolveAnswer struct {
	Magic string   `json:"pathfinder_child"`
	Name  string   `json:"name,omitempty"` // the file name that loaded
	Path  string   `json:"path,omitempty"` // where the loader found it
	Tried []string `json:"tried,omitempty"`
}

// ChildMain must be the first call in main of a program whose config sets [system] resolve =
// "dlopen" (the pathfinder command does): in the probe's child it dlopens, prints where from and
// exits; anywhere else it returns false at once.
func ChildMain() bool {
	if child.Role() != childResolveProbe {
		return false
	}
	var names []string
	ans := resolveAnswer{Magic: resolveMagic}
	if err := json.Unmarshal([]byte(os.Getenv(envResolveNames)), &names); err != nil {
		ans.Tried = append(ans.Tried, "bad request: "+err.Error())
	}
	for _, n := range names {
		lib, err := loader.Open(n, false)
		if err != nil {
			ans.Tried = append(ans.Tried, strings.TrimPrefix(err.Error(), "pathfinder: "))
			continue
		}
		ans.Name, ans.Path = n, lib.Path
		break
	}
	child.Reply(ans)
	return true
}

// probeError is a probe that did not answer (a timeout, a child that failed): unlike the loader's
// own answer, it is not remembered, since the next try may succeed.
type probeError struct{ err error }

func (e *probeError) Error() string { return e.err.Error() }
func (e *probeError) Unwrap() error { return e.err }

// probeResolve runs the child for names with the process environment the Finder sees (its
// LD_LIBRARY_PATH, which glibc reads at start), within timeout.
func (f *Finder) probeResolve(names []string, timeout time.Duration) (resolveAnswer, error) {
	var ans resolveAnswer
	if !loader.Available {
		return ans, errors.New("dlopen probe: " + strings.TrimPrefix(loader.ErrUnavailable.Error(), "pathfinder: "))
	}
	if child.Role() != "" {
		// A child whose main does not call ChildMain runs the program's own code; without this guard
		// it would start a child of its own, without end.
		return ans, errors.New("dlopen probe: this process is a probe child that did not stop in host.ChildMain")
	}
	exe, err := os.Executable()
	if err != nil {
		return ans, fmt.Errorf("dlopen probe: cannot find this program to re-execute it: %v", err)
	}
	req, _ := json.Marshal(names)
	env := append(child.Env(childResolveProbe, "LD_LIBRARY_PATH"), envResolveNames+"="+string(req))
	if v := f.opts.getenv("LD_LIBRARY_PATH"); v != "" {
		env = append(env, "LD_LIBRARY_PATH="+v) // glibc reads it at start: the Finder's view of it
	}
	out := child.Run(context.Background(), timeout, 500*time.Millisecond, env, exe)
	if out.TimedOut {
		return ans, fmt.Errorf("dlopen probe: the child did not answer within %v", timeout)
	}
	if !child.Answer(out.Stdout, resolveMagic, &ans) {
		return ans, fmt.Errorf("dlopen probe: %s did not answer as a probe child (%s); does its main call host.ChildMain() first? output: %q",
			exe, child.ExitText(out.Err), child.Clip(string(out.Stdout)+string(out.Stderr), 200))
	}
	return ans, nil
}
