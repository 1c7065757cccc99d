// Package child runs this program again as a child process, for work that must not happen in the
// process that asks: loading a library runs its constructors, and cuInit breaks every fork made
// after it. The child learns its role from RoleVar in the initialisation of the package that serves
// the role, before the program's main could run, does the work, prints one JSON object whose first
// key is "pathfinder_child" (the protocol's magic string) and exits. What it prints and how long it
// takes are bounded. Other programs run by pathfinder (nvidia-smi) share the output bound.
package child

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/bounded"
)

// RoleVar names the role a child was started in; every variable pathfinder sets for its children
// starts with its prefix.
const RoleVar = "PATHFINDER_INTERNAL_CHILD"

const internalPrefix = "PATHFINDER_INTERNAL_"

// Role is the role this process was started in as a child, or "" for none.
func Role() string { return os.Getenv(RoleVar) }

// Env is this process's environment for a child in role: without every variable pathfinder sets for
// children and without the names in drop (the caller's view of those is what counts; it appends
// them), with the role set.
func Env(role string, drop ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, internalPrefix) && !contains(drop, k) {
			env = append(env, kv)
		}
	}
	return append(env, RoleVar+"="+role)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Output is what a program printed, the first StdoutLimit and StderrLimit bytes of each stream, and
// how it ended.
type Output struct {
	Stdout, Stderr []byte
	Err            error // what Run of exec.Cmd returned
	TimedOut       bool
}

// Limits on what a child's streams may fill in the parent's memory.
const (
	StdoutLimit = 1 << 20
	StderrLimit = 4096
)

// Run runs the program at path with args and env (nil: this process's), within timeout or ctx.
// waitDelay is how long to wait for the streams after the program is killed (a killed script's own
// children may hold them open).
func Run(ctx context.Context, timeout, waitDelay time.Duration, env []string, path string, args ...string) Output {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	stdout, stderr := &bounded.Buffer{Limit: StdoutLimit}, &bounded.Buffer{Limit: StderrLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	return Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Err: err, TimedOut: errors.Is(ctx.Err(), context.DeadlineExceeded)}
}

// Answer decodes into v the child's answer in out: the JSON object that starts with the
// "pathfinder_child" key holding magic (a library may print before it). False when there is none,
// it is cut short, or it speaks another protocol.
func Answer(out []byte, magic string, v any) bool {
	i := bytes.Index(out, []byte(`{"pathfinder_child":`))
	if i < 0 {
		return false
	}
	var head struct {
		Magic string `json:"pathfinder_child"`
	}
	dec := json.NewDecoder(bytes.NewReader(out[i:]))
	if err := dec.Decode(&head); err != nil || head.Magic != magic {
		return false
	}
	return json.Unmarshal(out[i:i+int(dec.InputOffset())], v) == nil
}

// Reply prints the answer v (whose first field carries the magic) and exits the child.
func Reply(v any) {
	_ = json.NewEncoder(os.Stdout).Encode(v)
	os.Exit(0)
}

// ExitText says how a program ended, for a message.
func ExitText(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.Error()
	default:
		return err.Error()
	}
}

// Clip is s trimmed and cut to n bytes, for a message.
func Clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
