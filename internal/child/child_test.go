package child

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestAnswer(t *testing.T) {
	type answer struct {
		Magic string `json:"pathfinder_child"`
		Path  string `json:"path"`
	}
	for _, tt := range []struct {
		name, out string
		ok        bool
	}{
		{"answer", `{"pathfinder_child":"m 1","path":"/x"}` + "\n", true},
		{"a library printed first", "constructor says hi\n" + `{"pathfinder_child":"m 1","path":"/x"}`, true},
		{"something after it", `{"pathfinder_child":"m 1","path":"/x"} trailing`, true},
		{"another protocol", `{"pathfinder_child":"m 2","path":"/x"}`, false},
		{"cut short", `{"pathfinder_child":"m 1","pa`, false},
		{"the program's own output", "usage: pathfinder\n", false},
	} {
		var a answer
		if ok := Answer([]byte(tt.out), "m 1", &a); ok != tt.ok || ok && a.Path != "/x" {
			t.Errorf("%s: Answer = %v, %+v", tt.name, ok, a)
		}
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("PATHFINDER_INTERNAL_OTHER", "x")
	t.Setenv("LD_LIBRARY_PATH", "/mine")
	t.Setenv("KEEP_ME", "1")
	env := strings.Join(Env("role", "LD_LIBRARY_PATH"), "\n")
	for _, want := range []string{"KEEP_ME=1", RoleVar + "=role"} {
		if !strings.Contains(env, want) {
			t.Errorf("Env lacks %s", want)
		}
	}
	for _, gone := range []string{"PATHFINDER_INTERNAL_OTHER", "LD_LIBRARY_PATH"} {
		if strings.Contains(env, gone+"=") {
			t.Errorf("Env keeps %s", gone)
		}
	}
}

// TestRun: output past the limits is dropped, and a program that outlives its timeout is reported so.
func TestRun(t *testing.T) {
	sh, err := os.Stat("/bin/sh")
	if err != nil || sh.IsDir() {
		t.Skip("no /bin/sh")
	}
	out := Run(context.Background(), 10*time.Second, time.Second, nil, "/bin/sh", "-c", "head -c 2000000 /dev/zero; head -c 9000 /dev/zero >&2")
	if len(out.Stdout) != StdoutLimit || len(out.Stderr) != StderrLimit || out.Err != nil || out.TimedOut {
		t.Errorf("kept %d and %d bytes, %v, timed out %v", len(out.Stdout), len(out.Stderr), out.Err, out.TimedOut)
	}
	out = Run(context.Background(), 100*time.Millisecond, 100*time.Millisecond, nil, "/bin/sh", "-c", "sleep 5")
	if !out.TimedOut {
		t.Errorf("a program sleeping past its timeout: %+v", out)
	}
}
