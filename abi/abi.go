// Package abi is the contract between the pathfinder host and its search plugins: the request a step
// receives, the response it returns, and the guest SDK that hides the WebAssembly exports so a plugin
// author writes one search function. It imports only the standard library and builds for wasip1 and the host.
package abi

import (
	"path"
	"slices"
	"strings"
)

// Version is the plugin ABI version. The host refuses a plugin that reports another one.
const Version = 1

// Export and import names of version 1. A plugin is a WASI preview-1 reactor that exports
// ExportVersion, ExportAlloc and ExportSearch (ExportDescribe is optional) and may import
// ImportLog from module ImportModule.
const (
	ExportVersion  = "pathfinder_abi_version" // () -> i32
	ExportAlloc    = "pathfinder_alloc"       // (size i32) -> ptr i32
	ExportSearch   = "pathfinder_search"      // (ptr, len i32) -> i64 = ptr<<32 | len
	ExportDescribe = "pathfinder_describe"    // () -> i64 = ptr<<32 | len
	ImportModule   = "pathfinder"
	ImportLog      = "log" // (ptr, len i32)
	// ImportSystemResolve asks where the OS loader would find a library of the catalog, by name:
	// (name ptr, name len, out ptr, out cap i32) -> i32, the path's length written at out, or a
	// ResolveErr code. The host answers only plugins granted CapabilitySystemResolve.
	ImportSystemResolve = "system_resolve"
)

// CapabilitySystemResolve is the config's name for the right to call ImportSystemResolve.
const CapabilitySystemResolve = "system_resolve"

// Codes ImportSystemResolve returns instead of a length.
const (
	ResolveDenied   = -1 // the plugin was not granted the capability
	ResolveNotFound = -2 // the loader would not find it, or only a stub or another architecture's file
	ResolveTooLong  = -3 // the path does not fit the buffer
)

// Kind is what is being searched for.
type Kind string

const (
	KindDynamicLib Kind = "dynamic-lib"
	KindHeaderDir  Kind = "header-dir"
	KindBinary     Kind = "binary"
	KindStaticLib  Kind = "static-lib"
	KindBitcode    Kind = "bitcode"
)

// Platform is the platform a search is for; it need not be the one the host runs on.
type Platform struct {
	OS   string `json:"os"`             // GOOS spelling: "linux", "windows"
	Arch string `json:"arch"`           // GOARCH spelling: "amd64", "arm64"
	Libc string `json:"libc,omitempty"` // "glibc", "musl" or empty
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Library is a descriptor, as a descriptor pack declares it: a dynamic library, or a header set, a
// binary utility, a static or a bitcode library (the pack table says which). Field names follow
// cuda.pathfinder's catalog. File names are listed newest first.
type Library struct {
	Name                    string   `json:"name" toml:"name"`
	PackagedWith            string   `json:"packaged_with" toml:"packaged_with"` // "ctk", "other" or "driver"
	LinuxSonames            []string `json:"linux_sonames,omitempty" toml:"linux_sonames"`
	WindowsDLLs             []string `json:"windows_dlls,omitempty" toml:"windows_dlls"`
	LinuxFiles              []string `json:"linux_files,omitempty" toml:"linux_files"`     // other kinds: the header that marks the directory, the binary, the archive, the bitcode file
	WindowsFiles            []string `json:"windows_files,omitempty" toml:"windows_files"` // the same on Windows ("nvcc.exe", "cudadevrt.lib")
	CondaRelDirsLinux       []string `json:"conda_rel_dirs_linux,omitempty" toml:"conda_rel_dirs_linux"`
	CondaRelDirsWindows     []string `json:"conda_rel_dirs_windows,omitempty" toml:"conda_rel_dirs_windows"`
	SitePackagesLinux       []string `json:"site_packages_linux,omitempty" toml:"site_packages_linux"`
	SitePackagesWindows     []string `json:"site_packages_windows,omitempty" toml:"site_packages_windows"`
	AnchorRelDirsLinux      []string `json:"anchor_rel_dirs_linux,omitempty" toml:"anchor_rel_dirs_linux"`
	AnchorRelDirsWindows    []string `json:"anchor_rel_dirs_windows,omitempty" toml:"anchor_rel_dirs_windows"`
	InstallRootEnvVars      []string `json:"install_root_env_vars,omitempty" toml:"install_root_env_vars"`
	InstallRootRelDirs      []string `json:"install_root_rel_dirs,omitempty" toml:"install_root_rel_dirs"`
	Dependencies            []string `json:"dependencies,omitempty" toml:"dependencies"`
	OptionalDependencies    []string `json:"optional_dependencies,omitempty" toml:"optional_dependencies"`
	CanaryAnchors           []string `json:"ctk_root_canary_anchor_libnames,omitempty" toml:"ctk_root_canary_anchor_libnames"`
	RequiresAddDLLDirectory bool     `json:"requires_add_dll_directory,omitempty" toml:"requires_add_dll_directory"`
	RequiresRTLDDeepbind    bool     `json:"requires_rtld_deepbind,omitempty" toml:"requires_rtld_deepbind"`
	// ProgramFilesDirsWindows are globs, relative to the Program Files directory, of the directories
	// that hold the files ("NVIDIA/CUDNN/v9.*/bin/*/{triple}"); the programfiles step walks them.
	ProgramFilesDirsWindows []string `json:"program_files_dirs_windows,omitempty" toml:"program_files_dirs_windows"`
}

// FileNames returns the declared file names on p, newest first: sonames or DLL names for a dynamic
// library, the declared files for the other kinds.
func (l *Library) FileNames(p Platform) []string {
	if p.OS == "windows" {
		return append(l.WindowsDLLs[:len(l.WindowsDLLs):len(l.WindowsDLLs)], l.WindowsFiles...)
	}
	return append(l.LinuxSonames[:len(l.LinuxSonames):len(l.LinuxSonames)], l.LinuxFiles...)
}

// CondaDirs returns the sub-directories of a conda prefix to search on p. A dynamic library that
// declares none is searched as in a toolkit root, with its anchor directories (lib64, lib; nvvm/lib64
// for nvvm), where conda's packages put them; on Windows under Library (Library/bin/x64, Library/bin,
// Library/nvvm/bin). "{triple}" stands for p.Triple().
func (l *Library) CondaDirs(p Platform) []string {
	dirs := l.CondaRelDirsLinux
	if p.OS == "windows" {
		dirs = l.CondaRelDirsWindows
	}
	if len(dirs) > 0 || len(l.LinuxFiles)+len(l.WindowsFiles) > 0 {
		return p.expand(dirs)
	}
	anchors := l.AnchorDirs(p)
	if p.OS != "windows" {
		return anchors
	}
	out := make([]string, len(anchors))
	for i, a := range anchors {
		out[i] = "Library/" + a
	}
	return out
}

// SitePackagesDirs returns the site-packages sub-directories to search on p.
func (l *Library) SitePackagesDirs(p Platform) []string {
	if p.OS == "windows" {
		return p.expand(l.SitePackagesWindows)
	}
	return p.expand(l.SitePackagesLinux)
}

// AnchorDirs returns the sub-directories of a toolkit root to search on p.
func (l *Library) AnchorDirs(p Platform) []string {
	if p.OS == "windows" {
		return p.expand(l.AnchorRelDirsWindows)
	}
	return p.expand(l.AnchorRelDirsLinux)
}

// ProgramFilesDirs returns the globs under the Program Files directory to search on p: none unless p
// is a Windows platform. "{triple}" stands for p.Triple().
func (l *Library) ProgramFilesDirs(p Platform) []string {
	if p.OS != "windows" {
		return nil
	}
	return p.expand(l.ProgramFilesDirsWindows)
}

// Triple is the CUDA toolkit's name for p in targets/<triple>: "x86_64-linux", "sbsa-linux", "x64".
func (p Platform) Triple() string {
	switch {
	case p.OS == "windows" && p.Arch == "arm64":
		return "arm64"
	case p.OS == "windows":
		return "x64"
	case p.Arch == "arm64":
		return "sbsa-linux"
	case p.Arch == "ppc64le":
		return "ppc64le-linux"
	}
	return "x86_64-linux"
}

// ToolkitRoot derives a CUDA toolkit root from the path of a library in it: the directory above
// lib64, lib, targets/<triple>/lib (or lib64), bin/x64, bin/<triple> or bin, whichever the path ends
// in. ok is false when the path is in none of those layouts.
func ToolkitRoot(libPath string) (root string, ok bool) {
	dir := path.Dir(libPath)
	parts := strings.Split(strings.Trim(dir, "/"), "/")
	n := len(parts)
	at := func(i int) string {
		if i < 0 || i >= n {
			return ""
		}
		return parts[i]
	}
	strip := 0
	switch last := at(n - 1); {
	case (last == "lib" || last == "lib64") && at(n-3) == "targets":
		strip = 3 // targets/x86_64-linux/lib
	case last == "lib" || last == "lib64":
		strip = 1
	case at(n-2) == "bin":
		strip = 2 // bin/x64, bin/x86_64
	case last == "bin":
		strip = 1
	default:
		return "", false
	}
	if strip >= n {
		return "", false
	}
	return "/" + strings.Join(parts[:n-strip], "/"), true
}

func (p Platform) expand(dirs []string) []string {
	if !slices.ContainsFunc(dirs, func(d string) bool { return strings.Contains(d, "{triple}") }) {
		return dirs
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = strings.ReplaceAll(d, "{triple}", p.Triple())
	}
	return out
}

// Root is a directory the host granted to a step, read-only, mounted at its host path.
type Root struct {
	Path string `json:"path"`
	Role string `json:"role,omitempty"` // RoleSitePackages, or "env:NAME" for a directory named by env var NAME
}

// RoleSitePackages marks a granted Python site-packages directory. The host orders them.
const RoleSitePackages = "site-packages"

// Request is what the host sends to a step.
type Request struct {
	ABI      int               `json:"abi"`
	Step     string            `json:"step"`            // the step's name in the configured order
	Entry    string            `json:"entry,omitempty"` // which registered search to run in a multi-step module
	Kind     Kind              `json:"kind"`
	Platform Platform          `json:"platform"`
	Library  Library           `json:"library"`
	Roots    []Root            `json:"roots,omitempty"`
	Options  map[string]string `json:"options,omitempty"`
}

// Response is what a step returns: candidates in the order it prefers them, and what it tried.
type Response struct {
	Candidates []Candidate `json:"candidates,omitempty"`
	Tried      []Attempt   `json:"tried,omitempty"`
	Error      string      `json:"error,omitempty"` // the step could not search at all
}

// Candidate is a file a step proposes. The host validates it before anything uses it.
type Candidate struct {
	Path     string `json:"path"`
	FoundVia string `json:"found_via"`
	Note     string `json:"note,omitempty"`
}

// Attempt is a place a step looked at without finding what it wanted, and why.
type Attempt struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Description is what a plugin says about itself through ExportDescribe.
type Description struct {
	ABI     int      `json:"abi"`
	Names   []string `json:"names"`
	Version string   `json:"version,omitempty"`
	Env     []string `json:"env,omitempty"` // env vars it wants to read
}
