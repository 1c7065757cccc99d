// Package resolveprobe is the dlopen probe ([system] resolve = "dlopen"): the OS loader itself says
// where it finds a canary library, in a child process.
package resolveprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/child"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
)

// The library is loaded in a child process (internal/child: this program re-executed in the
// role childResolveProbe), so its constructors, and whatever it drags in, never touch this process.
// This package's initialisation, which runs before the program's main, recognises the role, answers
// with one JSON object and exits: the program's main never runs in the child, and needs nothing for it.
const (
	childResolveProbe = "resolve-probe"
	envResolveNames   = "PATHFINDER_INTERNAL_RESOLVE_NAMES" // a JSON array of file names to dlopen, newest first
	resolveMagic      = "pathfinder resolve-probe 1"
)

// Answer is what the child prints.
type Answer struct {
	Magic string   `json:"pathfinder_child"`
	Name  string   `json:"name,omitempty"` // the file name that loaded
	Path  string   `json:"path,omitempty"` // where the loader found it
	Tried []string `json:"tried,omitempty"`
}

func init() {
	if child.Role() == childResolveProbe {
		serveResolveProbe()
	}
}

// serveResolveProbe is the child's whole life: dlopen the names in turn, say where the first one
// came from, exit.
func serveResolveProbe() {
	var names []string
	ans := Answer{Magic: resolveMagic}
	if err := json.Unmarshal([]byte(os.Getenv(envResolveNames)), &names); err != nil {
		ans.Tried = append(ans.Tried, "bad request: "+err.Error())
	}
	for _, n := range names {
		lib, err := loader.Open(n, false)
		if err != nil {
			ans.Tried = append(ans.Tried, err.Error())
			continue
		}
		ans.Name, ans.Path = n, lib.Path
		break
	}
	child.Reply(ans)
}

// Run runs the child for names with ldLibraryPath, the LD_LIBRARY_PATH of the environment the caller
// searches in (glibc reads it at start), within timeout. Its error is a probe that did not answer (a
// timeout, a child that failed): unlike the loader's own answer, it may succeed next time.
func Run(names []string, timeout time.Duration, ldLibraryPath string) (Answer, error) {
	var ans Answer
	if !loader.Available {
		return ans, fmt.Errorf("dlopen probe: %w", loader.ErrUnavailable)
	}
	if r := child.Role(); r != "" {
		// A child serves its role during initialisation and exits; one that got here was started in
		// a role no package of this program serves, and must not start children of its own.
		return ans, fmt.Errorf("dlopen probe: this process is a child in the role %q, which nothing in it serves", r)
	}
	exe, err := os.Executable()
	if err != nil {
		return ans, fmt.Errorf("dlopen probe: cannot find this program to re-execute it: %v", err)
	}
	req, _ := json.Marshal(names)
	env := append(child.Env(childResolveProbe, "LD_LIBRARY_PATH"), envResolveNames+"="+string(req))
	if ldLibraryPath != "" {
		env = append(env, "LD_LIBRARY_PATH="+ldLibraryPath)
	}
	out := child.Run(context.Background(), timeout, 500*time.Millisecond, env, exe)
	if out.TimedOut {
		return ans, fmt.Errorf("dlopen probe: the child did not answer within %v", timeout)
	}
	if !child.Answer(out.Stdout, resolveMagic, &ans) {
		return ans, fmt.Errorf("dlopen probe: %s did not answer as a probe child (%s); output: %q",
			exe, child.ExitText(out.Err), child.Clip(string(out.Stdout)+string(out.Stderr), 200))
	}
	return ans, nil
}
