// Package abi is the contract between the pathfinder host and its search plugins: the request a step
// receives, the response it returns, and the guest SDK that hides the WebAssembly exports so a plugin
// author writes one search function. It imports only the standard library and builds for wasip1 and the host.
package abi

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

// Library is a library descriptor, as a descriptor pack declares it. Field names follow
// cuda.pathfinder's catalog. File names are listed newest first.
type Library struct {
	Name                    string   `json:"name" toml:"name"`
	PackagedWith            string   `json:"packaged_with" toml:"packaged_with"` // "ctk", "other" or "driver"
	LinuxSonames            []string `json:"linux_sonames,omitempty" toml:"linux_sonames"`
	WindowsDLLs             []string `json:"windows_dlls,omitempty" toml:"windows_dlls"`
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
}

// FileNames returns the library's declared file names on p, newest first.
func (l *Library) FileNames(p Platform) []string {
	if p.OS == "windows" {
		return l.WindowsDLLs
	}
	return l.LinuxSonames
}

// SitePackagesDirs returns the site-packages sub-directories to search on p.
func (l *Library) SitePackagesDirs(p Platform) []string {
	if p.OS == "windows" {
		return l.SitePackagesWindows
	}
	return l.SitePackagesLinux
}

// AnchorDirs returns the sub-directories of a toolkit root to search on p.
func (l *Library) AnchorDirs(p Platform) []string {
	if p.OS == "windows" {
		return l.AnchorRelDirsWindows
	}
	return l.AnchorRelDirsLinux
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
