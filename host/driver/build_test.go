package driver

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBuild_staticTag checks the point of -tags pathfinder_static: purego, and the dynamic libc it
// brings, are not linked at all; and without the tag they are (or this test could not fail).
func TestBuild_staticTag(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	const purego = "github.com/ebitengine/purego"
	for _, tc := range []struct {
		name   string
		tags   string
		linked bool
	}{
		{name: "default", tags: "", linked: true},
		{name: "static", tags: "pathfinder_static", linked: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(gobin, "list", "-deps", "-tags", tc.tags, ".")
			cmd.Env = append(cmd.Environ(), "GOOS=linux", "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			if got := slices.Contains(strings.Fields(string(out)), purego); got != tc.linked {
				t.Fatalf("purego linked = %v, want %v", got, tc.linked)
			}
		})
	}
}
