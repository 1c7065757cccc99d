// Package tomlx decodes TOML strictly: a syntax error or a key the target does not know is an error
// that names the file, line and column.
package tomlx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// Decode decodes data (from the file called name) into v, refusing unknown keys.
func Decode(name string, data []byte, v any) (toml.MetaData, error) {
	md, err := toml.Decode(string(data), v)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return md, fmt.Errorf("pathfinder: %s:%d:%d: %s", name, perr.Position.Line, perr.Position.Col, perr.Message)
		}
		return md, fmt.Errorf("pathfinder: %s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		line, col := Position(data, und[0])
		return md, fmt.Errorf("pathfinder: %s:%d:%d: unknown key %q", name, line, col, und[0].String())
	}
	return md, nil
}

// Position returns the 1-based line and column where key is set: its last part assigned after the
// header of the table holding it, or the table's own header. 0, 0 when it cannot be told.
func Position(data []byte, key toml.Key) (int, int) {
	lines := strings.Split(string(data), "\n")
	start := 0
	for n := len(key) - 1; n >= 1; n-- {
		if i := findHeader(lines, key[:n]); i >= 0 {
			start = i + 1
			break
		}
	}
	if i := findHeader(lines, key); i >= 0 {
		return i + 1, strings.Index(lines[i], "[") + 1
	}
	last := key[len(key)-1]
	for i := start; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " \t")
		for _, k := range []string{last, `"` + last + `"`} {
			if rest, ok := strings.CutPrefix(trimmed, k); ok && strings.HasPrefix(strings.TrimLeft(rest, " \t"), "=") {
				return i + 1, len(lines[i]) - len(trimmed) + 1
			}
		}
	}
	return 0, 0
}

func findHeader(lines []string, key toml.Key) int {
	want := strings.Join(key, ".")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "["+want+"]" || t == "[["+want+"]]" {
			return i
		}
	}
	return -1
}
