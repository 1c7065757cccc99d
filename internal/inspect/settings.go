package inspect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Setting is one key of the effective configuration and where its value came from.
type Setting struct {
	Key    string `json:"key"`    // "search.order", "plugin.wheels.read", "library.cuda.order"
	Value  any    `json:"value"`  // a string, bool, []string or map[string]string, as the file wrote it (paths resolved)
	Origin string `json:"origin"` // "builtin:pathfinder.toml:17:1", "/etc/pathfinder/pathfinder.toml:3:1", or "default"
}

// TOML is the setting's value as TOML.
func (s Setting) TOML() string { return TOMLValue(s.Value) }

// FormatSettings writes settings as a TOML document, each value followed by its origin in a comment
// (aligned within a table).
func FormatSettings(settings []Setting) string {
	var b strings.Builder
	for i := 0; i < len(settings); {
		table := settingTable(settings[i].Key)
		j := i
		width := 0
		for ; j < len(settings) && settingTable(settings[j].Key) == table; j++ {
			width = max(width, len(settingLine(settings[j])))
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s]\n", tomlTable(table))
		for _, s := range settings[i:j] {
			line := settingLine(s)
			fmt.Fprintf(&b, "%s%s  # %s\n", line, strings.Repeat(" ", min(width, 48)-min(len(line), 48)), s.Origin)
		}
		i = j
	}
	return b.String()
}

func settingTable(key string) string { return key[:max(strings.LastIndex(key, "."), 0)] }

func settingLine(s Setting) string {
	return tomlKey(s.Key[strings.LastIndex(s.Key, ".")+1:]) + " = " + s.TOML()
}

func tomlTable(t string) string {
	parts := strings.Split(t, ".")
	for i, p := range parts {
		parts[i] = tomlKey(p)
	}
	return strings.Join(parts, ".")
}

// tomlKey writes a key bare when TOML allows it, quoted otherwise.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(k)
		}
	}
	return k
}

// TOMLValue writes v as a TOML value on one line.
func TOMLValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case bool:
		return strconv.FormatBool(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = tomlString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case map[string]string:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, tomlKey(k)+" = "+tomlString(v[k]))
		}
		if len(kv) == 0 {
			return "{}"
		}
		return "{ " + strings.Join(kv, ", ") + " }"
	}
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(map[string]any{"v": v}); err == nil {
		return strings.TrimSpace(strings.TrimPrefix(b.String(), "v = "))
	}
	return tomlString(fmt.Sprint(v))
}

// tomlString is a TOML basic string: Go's quoting, but with \u escapes, which TOML has, for the \x
// ones it lacks.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteString(`\uFFFD`)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
