// Package printable escapes what could act on a terminal or forge a line of output: everything a
// plugin or the environment can make pathfinder print goes through it.
package printable

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with everything that could act on a terminal or forge a line escaped: control
// characters (C0, DEL, C1: newlines, carriage returns, escape sequences), the bidirectional
// formatting characters that reorder what is shown, and bytes that are not UTF-8. Everything a plugin
// can make the host print goes through it (logs, descriptions, reasons, tried paths, error details),
// and every value from the environment.
func String(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Is reports whether s holds no character String escapes: a name holding one is no name anything
// should use.
func Is(s string) bool { return !needsEscape(s) }

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || unicode.IsControl(r) || isBidi(r) {
			return true
		}
		i += n
	}
	return false
}

// isBidi reports the characters that change the order text is shown in (Unicode's bidirectional
// formatting characters: marks, embeddings, overrides, isolates).
func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
