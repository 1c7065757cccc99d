package programfiles

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/internal/steptest"
)

// TestStepMatchesReference runs the C of this step, as the builtin module ships it (programfiles.c), and
// Search over the same random trees, and requires the same candidates, attempts and log lines.
func TestStepMatchesReference(t *testing.T) { steptest.MatchReference(t, Plugin) }

// FuzzProgramFilesMatchReference: random globs over random directory names order and match alike.
func FuzzProgramFilesMatchReference(f *testing.F) {
	f.Add("NVIDIA/CUDNN/v9.*/bin/*/{triple}", "v9.10\nv9.9\nV9.10-rc1\nv9.010\nbin\n12.9\nx64")
	f.Add("a/[^b]*/[a-c]?", "ab\nac\na\n[x]\nB1")
	f.Add("x/[", "x")
	steptest.CheckModule(f, Plugin.Name)
	steptest.Register(Plugin)
	dir := f.TempDir()
	// One Program Files directory, emptied after each input: the guest is the host's, one instance
	// reused between calls, as it is between a search's steps.
	root := filepath.Join(dir, "pf")
	env := map[string]string{"ProgramW6432": root}
	g := steptest.NewSandbox(f, dir).Guest(env)
	f.Fuzz(func(t *testing.T, glob, names string) {
		if strings.IndexByte(glob, 0) >= 0 {
			return // the catalog refuses a descriptor with a NUL byte
		}
		defer os.RemoveAll(root)
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
		req := &abi.Request{ABI: abi.Version, Step: "programfiles", Entry: "programfiles", Kind: abi.KindDynamicLib, Platform: abi.Platform{OS: "windows", Arch: "amd64"},
			Library: abi.Descriptor{Name: "cudnn", WindowsDLLs: []string{"cudnn64_9.dll"}, ProgramFilesDirsWindows: []string{glob, "NVIDIA/CUDNN/*"}}}
		want, wantLog := steptest.Reference(t, req, env)
		got, gotLog := g.Search(t, req)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotLog, wantLog) {
			t.Fatalf("glob %q over %q:\nC:  %+v %q\nGo: %+v %q", glob, names, got, gotLog, want, wantLog)
		}
	})
}
