package programfiles_test

import (
	"context"
	"debug/pe"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakepe"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

var (
	dllX64   = fakepe.File(pe.IMAGE_FILE_MACHINE_AMD64, true)
	dllArm64 = fakepe.File(pe.IMAGE_FILE_MACHINE_ARM64, true)
	exeArm64 = fakepe.File(pe.IMAGE_FILE_MACHINE_ARM64, false)
)

// windowsFinder is a Finder for a Windows target that sees nothing of this machine but env.
func windowsFinder(t *testing.T, arch string, env map[string]string) *host.Finder {
	t.Helper()
	if _, ok := env["PATHFINDER_CACHE_DIR"]; !ok {
		env["PATHFINDER_CACHE_DIR"] = filepath.Join(os.TempDir(), "pathfinder-test-cache")
	}
	f, err := host.New(host.Options{
		Platform:        host.Platform{OS: "windows", Arch: arch},
		LookupEnv:       func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		SystemConfigDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestProgramFiles_find runs the builtin step through the real host, the builtin pack's cuDNN globs
// and the host's PE check, on a Windows layout in a temporary directory.
func TestProgramFiles_find(t *testing.T) {
	tests := []struct {
		name  string
		arch  string
		env   string // the variable that names the Program Files directory
		files map[string][]byte
		want  string
	}{
		{
			name: "newest cuDNN, newest CUDA, the x64 directory, any case",
			arch: "amd64", env: "ProgramW6432",
			files: map[string][]byte{
				"Nvidia/cudnn/v9.9/bin/12.8/cudnn64_9.dll":         dllX64,
				"Nvidia/cudnn/V9.10/Bin/12.9/X64/CUDNN64_9.DLL":    dllX64,
				"Nvidia/cudnn/V9.10/Bin/12.9/arm64/CUDNN64_9.DLL":  dllArm64,
				"Nvidia/cudnn/V9.10/Bin/12.10/arm64/CUDNN64_9.DLL": dllArm64,
			},
			want: "Nvidia/cudnn/V9.10/Bin/12.9/X64/CUDNN64_9.DLL",
		},
		{
			name: "arm64: the arm64 directory",
			arch: "arm64", env: "ProgramFiles",
			files: map[string][]byte{
				"NVIDIA/CUDNN/v9.22/bin/13.2/x64/cudnn64_9.dll":   dllX64,
				"NVIDIA/CUDNN/v9.22/bin/13.2/arm64/cudnn64_9.dll": dllArm64,
			},
			want: "NVIDIA/CUDNN/v9.22/bin/13.2/arm64/cudnn64_9.dll",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pf := t.TempDir()
			for rel, data := range tt.files {
				filetree.Put(t, pf, rel, data)
			}
			f := windowsFinder(t, tt.arch, map[string]string{tt.env: pf})
			lib, err := f.Find(context.Background(), "cudnn")
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(pf, filepath.FromSlash(tt.want))
			if lib.Path != want || lib.FoundVia != "ProgramFiles" || lib.Step != "programfiles" {
				t.Fatalf("found %s via %q (step %q), want %s via ProgramFiles", lib.Path, lib.FoundVia, lib.Step, want)
			}
		})
	}
}

// TestProgramFiles_refused shows a DLL for the wrong machine, and an EXE named like the DLL, refused
// by the host with the reason in the explanation, and the next candidate taken.
func TestProgramFiles_refused(t *testing.T) {
	pf := t.TempDir()
	wrong := filetree.Put(t, pf, "NVIDIA/CUDNN/v9.10/bin/12.9/cudnn64_9.dll", dllX64) // the older layout: x64 only
	exe := filetree.Put(t, pf, "NVIDIA/CUDNN/v9.10/bin/cudnn64_9.dll", exeArm64)
	right := filetree.Put(t, pf, "NVIDIA/CUDNN/v9.9/bin/12.8/arm64/cudnn64_9.dll", dllArm64)
	f := windowsFinder(t, "arm64", map[string]string{"ProgramW6432": pf})

	ex := f.Explain(context.Background(), search.DynamicLib, "cudnn")
	if ex.Err != nil {
		t.Fatal(ex.Err)
	}
	if ex.Result == nil || ex.Result.Path != right || ex.Result.FoundVia != "ProgramFiles" {
		t.Fatalf("result %+v, want %s", ex.Result, right)
	}
	var step *search.StepTrace
	for i := range ex.Steps {
		if ex.Steps[i].Step == "programfiles" {
			step = &ex.Steps[i]
		}
	}
	if step == nil || step.Outcome != "found" {
		t.Fatalf("no programfiles step that found it: %+v", ex.Steps)
	}
	refused := map[string]string{}
	for _, c := range step.Candidates {
		if !c.Taken {
			refused[c.Path] = c.Refused
		}
	}
	if why := refused[wrong]; !strings.Contains(why, "built for PE machine 0x8664, not arm64") {
		t.Errorf("x64 DLL for an arm64 target: refused %q", why)
	}
	if why := refused[exe]; why != "not a DLL" {
		t.Errorf("EXE: refused %q", why)
	}
	if len(refused) != 2 {
		t.Errorf("refused %v, want the two above", refused)
	}
}

// TestProgramFiles_linuxTarget shows the step doing nothing for a Linux search, even with the
// variables set and a Windows layout in place.
func TestProgramFiles_linuxTarget(t *testing.T) {
	pf := t.TempDir()
	filetree.Put(t, pf, "NVIDIA/CUDNN/v9.10/bin/12.9/x64/cudnn64_9.dll", dllX64)
	filetree.Put(t, pf, "NVIDIA/CUDNN/v9.10/bin/12.9/x64/libcudnn.so.9", []byte("\x7fELF"))
	env := map[string]string{"ProgramW6432": pf, "PATHFINDER_CACHE_DIR": filepath.Join(os.TempDir(), "pathfinder-test-cache")}
	f, err := host.New(host.Options{Platform: host.Platform{OS: "linux", Arch: "amd64", Libc: "glibc"}, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, SystemConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ex := f.Explain(context.Background(), search.DynamicLib, "cudnn")
	if ex.Result != nil {
		t.Skipf("this machine has cuDNN (%s via %s): the search stopped before programfiles", ex.Result.Path, ex.Result.Step)
	}
	ran := false
	for _, st := range ex.Steps {
		if st.Step == "programfiles" {
			ran = true
			if st.Outcome != "nothing" || len(st.Candidates)+len(st.Tried) > 0 {
				t.Fatalf("programfiles on a linux target: %+v", st)
			}
		}
	}
	if !ran {
		t.Fatalf("programfiles is not in the default order: %+v", ex.Steps)
	}
}

// TestProgramFiles_header finds cuDNN's headers the installer puts under include/<CUDA version>.
func TestProgramFiles_header(t *testing.T) {
	pf := t.TempDir()
	filetree.Put(t, pf, "NVIDIA/CUDNN/v9.1/include/11.8/cudnn.h", []byte("#pragma once\n"))
	filetree.Put(t, pf, "NVIDIA/CUDNN/v9.1/include/12.4/cudnn.h", []byte("#pragma once\n"))
	f := windowsFinder(t, "amd64", map[string]string{"ProgramW6432": pf})
	lib, err := f.FindKind(context.Background(), search.HeaderDir, "cudnn")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(pf, "NVIDIA/CUDNN/v9.1/include/12.4"); lib.Path != want || lib.FoundVia != "ProgramFiles" {
		t.Fatalf("found %s via %q, want %s via ProgramFiles", lib.Path, lib.FoundVia, want)
	}
}
