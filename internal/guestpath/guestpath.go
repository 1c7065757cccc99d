// Package guestpath maps the host's absolute paths to the paths a sandboxed plugin sees, and back.
//
// A plugin is a WASI guest: it sees one tree rooted at "/", with "/" between names, and checks paths
// with Go's path package (path.IsAbs, path.Clean, path.Join). On a Unix host a host path is already
// such a path and the mapping is the identity. On a Windows host the volume becomes the first name,
// as a file: URL spells a drive (file:///C:/...):
//
//	host                            guest
//	C:\Program Files\NVIDIA         /C:/Program Files/NVIDIA
//	C:/Program Files/NVIDIA         /C:/Program Files/NVIDIA
//	C:\                             /C:
//	\\?\C:\Program Files\NVIDIA     /C:/Program Files/NVIDIA   (the long-path prefix is dropped)
//	\\fs1\sw\conda                  /UNC/fs1/sw/conda
//	\\?\UNC\fs1\sw\conda            /UNC/fs1/sw/conda
//
// Why this form: it is absolute and clean for path.IsAbs and path.Clean, so a guest needs no change;
// ".." can never climb above the volume ("/C:/.." cleans to "/", which maps to nothing); the drive
// is kept as written, so the mapping is exact both ways; "/C:" cannot be confused with a Unix-style
// name (a Windows name cannot hold ':'), and "/UNC" mirrors Windows' own \\?\UNC\ spelling. The
// MSYS form (/c/Program Files) was not taken: it loses the drive's case and reads like a real Unix
// path.
//
// Refused, with the path and the reason: relative paths, including drive-relative (C:cuda) and
// rooted-without-a-drive (\cuda) ones; device paths (\\.\, and \\?\ or \??\ paths to anything but a
// drive or a UNC share, such as volume GUIDs); a UNC path without a share; and names Windows cannot
// hold or that would not map back (':' past the drive, as in an NTFS stream, a backslash in a guest
// name, <>"|?*, control characters).
package guestpath

import (
	"fmt"
	"path"
	"runtime"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// Map maps paths for one host OS. The zero value is the identity of a Unix host.
type Map struct {
	windows bool
}

// For returns the mapping for a host running goos (runtime.GOOS).
func For(goos string) Map { return Map{windows: goos == "windows"} }

// Windows reports whether the host's paths are Windows paths.
func (m Map) Windows() bool { return m.windows }

// Host maps this host's paths. It depends on the OS the host runs on, never on the platform a
// search is for: `find --target windows/amd64` on Linux searches Linux paths.
//
// Everything that crosses into the sandbox is mapped there (mount points, granted variables that
// hold absolute paths, request roots, system_resolve answers) and everything a plugin answers is
// mapped back before the host looks at it (candidates, tried paths). The host's own records — the
// result cache's observations, the trace, what is loaded and printed — stay in host form.
var Host = For(runtime.GOOS)

// ToolkitRoot is abi.ToolkitRoot for a host path: the toolkit root a library's directory (lib64,
// targets/<triple>/lib, bin/x64, …) belongs to, in host form.
func (m Map) ToolkitRoot(p string) (string, bool) {
	g, err := m.ToGuest(p)
	if err != nil {
		return "", false
	}
	root, ok := abi.ToolkitRoot(g)
	if !ok || IsVolumeRoot(root) {
		return "", false // a whole drive or share is no toolkit root
	}
	h, err := m.ToHost(root)
	return h, err == nil
}

// Error is a path that has no form on the other side, and why.
type Error struct {
	Path string
	Why  string
}

func (e *Error) Error() string { return fmt.Sprintf("%q: %s", e.Path, e.Why) }

// ToGuest returns the path the guest sees for the absolute host path host, cleaned.
func (m Map) ToGuest(host string) (string, error) {
	if !m.windows {
		if !path.IsAbs(host) {
			return "", &Error{host, "a relative path: never resolved against the working directory"}
		}
		return path.Clean(host), nil
	}
	vol, names, err := splitWindows(host)
	if err != nil {
		return "", err
	}
	return "/" + strings.Join(append([]string{vol}, names...), "/"), nil
}

// IsVolumeRoot reports whether the guest path is a whole Windows volume: a drive (/C:) or a share
// (/UNC/server/share).
func IsVolumeRoot(guest string) bool {
	names := strings.Split(strings.TrimPrefix(guest, "/"), "/")
	return len(names) == 1 && isDrive(names[0]) || len(names) == 3 && names[0] == "UNC"
}

// ToHost returns the host path for the guest path guest, which must be absolute and clean: the
// inverse of ToGuest (ToGuest(ToHost(g)) == g whenever ToHost accepts g).
func (m Map) ToHost(guest string) (string, error) {
	switch {
	case !path.IsAbs(guest):
		return "", &Error{guest, "not an absolute path"}
	case path.Clean(guest) != guest:
		return "", &Error{guest, "not a clean path (clean: " + path.Clean(guest) + ")"}
	case !m.windows:
		return guest, nil
	case guest == "/":
		return "", &Error{guest, "the guest's root is no path on a Windows host: paths start with a drive (/C:/...) or /UNC/server/share"}
	}
	names := strings.Split(guest[1:], "/")
	for _, n := range names {
		if strings.ContainsRune(n, '\\') {
			return "", &Error{guest, `has a backslash in a name, which a Windows host reads as a separator`}
		}
	}
	switch {
	case isDrive(names[0]):
		if err := checkNames(guest, names[1:]); err != nil {
			return "", err
		}
		return names[0] + `\` + strings.Join(names[1:], `\`), nil
	case names[0] == "UNC":
		if len(names) < 3 {
			return "", &Error{guest, "a UNC path needs a server and a share (/UNC/server/share)"}
		}
		if err := checkNames(guest, names[1:]); err != nil {
			return "", err
		}
		h := `\\` + strings.Join(names[1:], `\`)
		if len(names) == 3 {
			h += `\` // the share's root, as C:\ is the drive's
		}
		return h, nil
	}
	return "", &Error{guest, "not a path on a Windows host: paths start with a drive (/C:/...) or /UNC/server/share"}
}

// splitWindows splits an absolute Windows path into its volume as the guest names it ("C:",
// "UNC/server/share") and its clean names.
func splitWindows(p string) (vol string, names []string, err error) {
	s := strings.ReplaceAll(p, "/", `\`)
	if rest, ok := cutPrefixFold(s, `\\?\`, `\??\`); ok {
		switch {
		case len(rest) >= 3 && isDrive(rest[:2]) && rest[2] == '\\':
			s = rest
		case hasPrefixFold(rest, `UNC\`):
			s = `\\` + rest[4:]
		default:
			return "", nil, &Error{p, `a \\?\ path to something other than a drive or a UNC share (a volume or a device): not mapped into the sandbox`}
		}
	}
	switch {
	case strings.HasPrefix(s, `\\.\`) || s == `\\.`:
		return "", nil, &Error{p, `a device path (\\.\): not a directory the sandbox can mount`}
	case strings.HasPrefix(s, `\\`):
		parts := strings.SplitN(s[2:], `\`, 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return "", nil, &Error{p, `a UNC path needs a server and a share (\\server\share\...)`}
		}
		for _, n := range parts[:2] {
			if n == "." || n == ".." {
				return "", nil, &Error{p, `a UNC path needs a server and a share (\\server\share\...)`}
			}
		}
		rest := ""
		if len(parts) == 3 {
			rest = parts[2]
		}
		names = cleanNames(rest)
		if err := checkNames(p, append(parts[:2:2], names...)); err != nil {
			return "", nil, err
		}
		return "UNC/" + parts[0] + "/" + parts[1], names, nil
	case len(s) >= 2 && isDrive(s[:2]):
		if len(s) == 2 || s[2] != '\\' {
			return "", nil, &Error{p, "relative to drive " + s[:2] + "'s current directory: not an absolute path"}
		}
		names = cleanNames(s[3:])
		if err := checkNames(p, names); err != nil {
			return "", nil, err
		}
		return s[:2], names, nil
	case strings.HasPrefix(s, `\`):
		return "", nil, &Error{p, "rooted but without a drive: relative to the current drive, not an absolute path"}
	}
	return "", nil, &Error{p, "a relative path: never resolved against the working directory"}
}

// cleanNames splits a backslash-separated path into names, dropping empty and "." names and
// applying "..", never above the volume.
func cleanNames(s string) []string {
	var out []string
	for _, n := range strings.Split(s, `\`) {
		switch n {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, n)
		}
	}
	return out
}

// checkNames refuses a name Windows cannot hold or that would not map back.
func checkNames(p string, names []string) error {
	for _, n := range names {
		for _, c := range n {
			switch {
			case c == ':':
				return &Error{p, fmt.Sprintf("name %q holds ':' (an NTFS stream or a device): not mapped", n)}
			case c < 0x20 || strings.ContainsRune(`<>"|?*`, c):
				return &Error{p, fmt.Sprintf("name %q holds %q, which Windows does not allow in a name", n, c)}
			}
		}
	}
	return nil
}

func isDrive(s string) bool {
	return len(s) == 2 && s[1] == ':' && ('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func cutPrefixFold(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if hasPrefixFold(s, p) {
			return s[len(p):], true
		}
	}
	return s, false
}

// EnvToGuest maps a granted variable's value: an absolute host path becomes its guest form, and
// anything else (a relative path, a name, a list) is passed as it is, for the guest to judge (a
// relative directory is refused there). An absolute path that has no guest form (a device path) is
// an error: such a value is not granted.
func (m Map) EnvToGuest(v string) (string, error) {
	if !m.windows || !looksAbsWindows(v) || strings.Contains(v, ";") {
		return v, nil // a ;-separated list is a list, whatever its first entry looks like
	}
	return m.ToGuest(v)
}

// looksAbsWindows reports whether v is meant as an absolute Windows path (a drive root, or \\).
func looksAbsWindows(v string) bool {
	s := strings.ReplaceAll(v, "/", `\`)
	return strings.HasPrefix(s, `\\`) || len(s) >= 3 && isDrive(s[:2]) && s[2] == '\\'
}
