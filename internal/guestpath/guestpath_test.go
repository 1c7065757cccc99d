package guestpath

import (
	"errors"
	"path"
	"runtime"
	"strings"
	"testing"
)

var windows, unix = For("windows"), For("linux")

func TestMap_ToGuest(t *testing.T) {
	tests := []struct {
		name      string
		m         Map
		host      string
		want      string // the guest path, or a part of the error
		wantError bool
	}{
		{"unix identity", unix, "/usr/local/cuda-12.8", "/usr/local/cuda-12.8", false},
		{"unix cleaned", unix, "/opt//cuda/./lib64/../lib64/", "/opt/cuda/lib64", false},
		{"unix root", unix, "/", "/", false},
		{"unix backslash is a name", unix, `/opt/a\b`, `/opt/a\b`, false},
		{"unix relative", unix, "cuda", "a relative path", true},
		{"drive", windows, `C:\Program Files\NVIDIA`, "/C:/Program Files/NVIDIA", false},
		{"drive forward slashes", windows, `C:/Program Files/NVIDIA`, "/C:/Program Files/NVIDIA", false},
		{"drive mixed and unclean", windows, `D:\conda\\envs\.\x\..\cu13\`, "/D:/conda/envs/cu13", false},
		{"drive case kept", windows, `c:\cuda`, "/c:/cuda", false},
		{"drive root", windows, `C:\`, "/C:", false},
		{"dot-dot stops at the drive", windows, `C:\..\..\Windows`, "/C:/Windows", false},
		{"long path prefix", windows, `\\?\C:\Program Files\NVIDIA`, "/C:/Program Files/NVIDIA", false},
		{"nt prefix", windows, `\??\C:\x`, "/C:/x", false},
		{"unc", windows, `\\fs1\sw\conda\envs\cu13`, "/UNC/fs1/sw/conda/envs/cu13", false},
		{"unc share root", windows, `\\fs1\sw\`, "/UNC/fs1/sw", false},
		{"unc dot-dot stops at the share", windows, `\\fs1\sw\..\..\x`, "/UNC/fs1/sw/x", false},
		{"long unc", windows, `\\?\UNC\fs1\sw\conda`, "/UNC/fs1/sw/conda", false},
		{"unc forward slashes", windows, `//fs1/sw/conda`, "/UNC/fs1/sw/conda", false},
		{"unc without share", windows, `\\fs1`, "needs a server and a share", true},
		{"unc empty share", windows, `\\fs1\\x`, "needs a server and a share", true},
		{"unc dot server", windows, `\\..\sw`, "needs a server and a share", true},
		{"device", windows, `\\.\pipe\x`, "a device path", true},
		{"device root", windows, `\\.\C:\x`, "a device path", true},
		{"volume guid", windows, `\\?\Volume{b75e2c83-0000-0000-0000-602f00000000}\x`, "other than a drive or a UNC share", true},
		{"long drive without backslash", windows, `\\?\C:`, "other than a drive", true},
		{"drive relative", windows, `C:cuda`, "relative to drive C:", true},
		{"bare drive", windows, `C:`, "relative to drive C:", true},
		{"rooted without drive", windows, `\cuda`, "rooted but without a drive", true},
		{"relative", windows, `cuda\bin`, "a relative path", true},
		{"empty", windows, ``, "a relative path", true},
		{"stream", windows, `C:\x\lib.dll:evil`, "an NTFS stream", true},
		{"list of paths", windows, `C:\a;D:\b`, "holds ':'", true},
		{"wildcard", windows, `C:\x\*`, "does not allow", true},
		{"control character", windows, "C:\\x\ty", "does not allow", true},
		{"not a drive letter", windows, `1:\x`, "a relative path", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.m.ToGuest(tt.host)
			if tt.wantError {
				var pe *Error
				if err == nil || !errors.As(err, &pe) || pe.Path != tt.host || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("ToGuest(%q) = %q, %v; want an error naming the path and saying %q", tt.host, got, err, tt.want)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ToGuest(%q) = %q, %v; want %q", tt.host, got, err, tt.want)
			}
		})
	}
}

func TestMap_ToHost(t *testing.T) {
	tests := []struct {
		name      string
		m         Map
		guest     string
		want      string
		wantError bool
	}{
		{"unix identity", unix, "/usr/local/cuda/lib64/libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13", false},
		{"unix relative", unix, "lib64/libcudart.so.13", "not an absolute path", true},
		{"unix unclean", unix, "/usr//lib", "not a clean path", true},
		{"drive", windows, "/C:/Program Files/NVIDIA/CUDNN/v9.10/bin/12.9/x64/cudnn64_9.dll", `C:\Program Files\NVIDIA\CUDNN\v9.10\bin\12.9\x64\cudnn64_9.dll`, false},
		{"drive root", windows, "/C:", `C:\`, false},
		{"unc", windows, "/UNC/fs1/sw/conda/Library/bin/cudart64_13.dll", `\\fs1\sw\conda\Library\bin\cudart64_13.dll`, false},
		{"unc share root", windows, "/UNC/fs1/sw", `\\fs1\sw\`, false},
		{"unc without share", windows, "/UNC/fs1", "needs a server and a share", true},
		{"guest root", windows, "/", "no path on a Windows host", true},
		{"unix-style on windows", windows, "/usr/lib/libcudart.so.13", "not a path on a Windows host", true},
		{"unc lower case is a name, not UNC", windows, "/unc/fs1/sw", "not a path on a Windows host", true},
		{"backslash in a name", windows, `/C:/x/..\..\Windows\evil.dll`, "backslash", true},
		{"stream", windows, "/C:/x/lib.dll:evil", "NTFS stream", true},
		{"drive in the middle", windows, "/C:/x/D:/y", "holds ':'", true},
		{"wildcard", windows, "/C:/x/lib?.dll", "does not allow", true},
		{"unclean", windows, "/C:/x/../y", "not a clean path", true},
		{"relative", windows, "C:/x", "not an absolute path", true},
		{"empty", windows, "", "not an absolute path", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.m.ToHost(tt.guest)
			if tt.wantError {
				var pe *Error
				if err == nil || !errors.As(err, &pe) || pe.Path != tt.guest || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("ToHost(%q) = %q, %v; want an error naming the path and saying %q", tt.guest, got, err, tt.want)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ToHost(%q) = %q, %v; want %q", tt.guest, got, err, tt.want)
			}
		})
	}
}

func TestMap_EnvToGuest(t *testing.T) {
	tests := []struct {
		name      string
		m         Map
		value     string
		want      string
		wantError bool
	}{
		{"unix unchanged", unix, "/usr/local/cuda", "/usr/local/cuda", false},
		{"unix relative unchanged", unix, "cuda", "cuda", false},
		{"windows path", windows, `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v13.0`, "/C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v13.0", false},
		{"windows unc", windows, `\\fs1\sw\cudnn`, "/UNC/fs1/sw/cudnn", false},
		{"windows relative left for the guest to refuse", windows, `cuda`, "cuda", false},
		{"windows drive-relative left for the guest to refuse", windows, `C:cuda`, "C:cuda", false},
		{"windows rooted left for the guest to refuse", windows, `\cuda`, `\cuda`, false},
		{"windows device refused", windows, `\\.\pipe\x`, "a device path", true},
		{"windows list passed as it is", windows, `C:\a;D:\b`, `C:\a;D:\b`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.m.EnvToGuest(tt.value)
			if tt.wantError {
				var pe *Error
				if err == nil || !errors.As(err, &pe) || pe.Path != tt.value || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("EnvToGuest(%q) = %q, %v; want an error saying %q", tt.value, got, err, tt.want)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("EnvToGuest(%q) = %q, %v; want %q", tt.value, got, err, tt.want)
			}
			// What the guest is given, it judges with the path package: a mapped path is absolute.
			if tt.m.Windows() && looksAbsWindows(tt.value) && !strings.Contains(tt.value, ";") && !path.IsAbs(got) {
				t.Fatalf("EnvToGuest(%q) = %q, which the guest would take for a relative path", tt.value, got)
			}
		})
	}
}

func TestFor_native(t *testing.T) {
	if For(runtime.GOOS).Windows() != (runtime.GOOS == "windows") {
		t.Fatalf("For(%q).Windows() = %v", runtime.GOOS, For(runtime.GOOS).Windows())
	}
}

// FuzzRoundTrip proves the mapping reversible on both hosts: a host path the mapping accepts comes
// back as the same path, cleaned (host -> guest -> host -> guest is a fixed point), and a guest path
// ToHost accepts maps back to itself exactly (so no two guest paths name one host path).
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{
		`C:\Program Files\NVIDIA`, `C:/x/../y`, `\\?\C:\a\b`, `\\fs1\sw\conda`, `\\?\UNC\fs1\sw`, `\\.\pipe\x`,
		`C:`, `C:\`, `\x`, `x`, "/usr/local/cuda", "/C:/x", "/UNC/s/h/x", "/", "/C:/a:b", `/C:/a\b`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range []Map{windows, unix} {
			if g, err := m.ToGuest(s); err == nil {
				if !path.IsAbs(g) || path.Clean(g) != g {
					t.Fatalf("windows=%v: ToGuest(%q) = %q, not absolute and clean", m.windows, s, g)
				}
				h, err := m.ToHost(g)
				if err != nil {
					t.Fatalf("windows=%v: ToGuest(%q) = %q, which ToHost refuses: %v", m.windows, s, g, err)
				}
				if g2, err := m.ToGuest(h); err != nil || g2 != g {
					t.Fatalf("windows=%v: %q -> %q -> %q -> %q, %v: not a round trip", m.windows, s, g, h, g2, err)
				}
				if h2, err := m.ToHost(g); err != nil || h2 != h {
					t.Fatalf("windows=%v: ToHost(%q) is not stable: %q, then %q", m.windows, g, h, h2)
				}
			} else {
				var pe *Error
				if !errors.As(err, &pe) || pe.Path != s || pe.Why == "" {
					t.Fatalf("windows=%v: ToGuest(%q) error %v does not name the path and why", m.windows, s, err)
				}
			}
			if h, err := m.ToHost(s); err == nil {
				if g, err := m.ToGuest(h); err != nil || g != s {
					t.Fatalf("windows=%v: ToHost(%q) = %q, which maps back to %q, %v", m.windows, s, h, g, err)
				}
			}
		}
	})
}
