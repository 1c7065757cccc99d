package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/pathfinder-dev/pathfinder/host/internal/loader"
)

// The dlopen probe ([system] resolve = "dlopen"): the OS loader itself says where it finds a canary.
// The library is loaded in a child process — this program re-executed with envResolveChild set — so
// its constructors, and whatever it drags in, never touch this process. ChildMain, first in main,
// answers there with one JSON object and exits.
const (
	envResolveChild = "PATHFINDER_INTERNAL_RESOLVE" // a JSON array of file names to dlopen, newest first
	resolveMagic    = "pathfinder resolve-probe 1"
)

// resolveAnswer is what the child prints.
type resolveAnswer struct {
	Magic string   `json:"pathfinder_resolve"`
	Name  string   `json:"name,omitempty"` // the file name that loaded
	Path  string   `json:"path,omitempty"` // where the loader found it
	Tried []string `json:"tried,omitempty"`
}

// ChildMain must be the first call in main of a program whose config sets [system] resolve =
// "dlopen" (the pathfinder command does): in the probe's child it dlopens, prints where from and
// exits; anywhere else it returns false at once.
func ChildMain() bool {
	v, ok := os.LookupEnv(envResolveChild)
	if !ok {
		return false
	}
	var names []string
	ans := resolveAnswer{Magic: resolveMagic}
	if err := json.Unmarshal([]byte(v), &names); err != nil {
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
	_ = json.NewEncoder(os.Stdout).Encode(ans)
	os.Exit(0)
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
	if _, child := os.LookupEnv(envResolveChild); child {
		// A child whose main does not call ChildMain runs the program's own code; without this guard
		// it would start a child of its own, without end.
		return ans, errors.New("dlopen probe: this process is a probe child that did not stop in host.ChildMain")
	}
	exe, err := os.Executable()
	if err != nil {
		return ans, fmt.Errorf("dlopen probe: cannot find this program to re-execute it: %v", err)
	}
	req, _ := json.Marshal(names)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(childEnv(f.opts.getenv("LD_LIBRARY_PATH")), envResolveChild+"="+string(req))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.WaitDelay = 500 * time.Millisecond
	runErr := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ans, fmt.Errorf("dlopen probe: the child did not answer within %v", timeout)
	}
	// A library's constructor may print before the answer: take the answer's line.
	i := bytes.Index(out.Bytes(), []byte(`{"pathfinder_resolve":`))
	if i < 0 || json.Unmarshal(bytes.TrimSpace(out.Bytes()[i:]), &ans) != nil || ans.Magic != resolveMagic {
		why := "exited"
		if runErr != nil {
			why = runErr.Error()
		}
		return ans, fmt.Errorf("dlopen probe: %s did not answer as a probe child (%s); does its main call host.ChildMain() first? output: %q",
			exe, why, clipOutput(out.String()+stderr.String(), 200))
	}
	return ans, nil
}

// childEnv is this process's environment with LD_LIBRARY_PATH as the Finder sees it.
func childEnv(ldLibraryPath string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "LD_LIBRARY_PATH", envResolveChild:
			continue
		}
		env = append(env, kv)
	}
	if ldLibraryPath != "" {
		env = append(env, "LD_LIBRARY_PATH="+ldLibraryPath)
	}
	return env
}

// clipOutput is s cut to n bytes, for a message.
func clipOutput(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
