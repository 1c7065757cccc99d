// Package tomlx decodes TOML strictly: a syntax error, a value of the wrong type or a key the target
// does not know is an Error that names the file, line and column.
package tomlx

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/pathfinder-dev/pathfinder/internal/suggest"
)

// Error is TOML that cannot be decoded, and where.
type Error struct {
	Name      string // the file, as the caller named it ("pack /etc/pathfinder/packs.d/a.toml")
	Line, Col int    // 1-based; 0 when the position cannot be told
	Key       string // the key at fault, dotted ("search.order"); "" for a syntax error
	Err       error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %v", e.Name, e.Line, e.Col, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Name, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Decode decodes data (from the file called name) into v, refusing unknown keys.
func Decode(name string, data []byte, v any) error {
	md, err := toml.Decode(string(data), v)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return parseError(name, data, perr)
		}
		return decodeError(name, data, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		line, col := Position(data, und[0])
		key := und[0]
		parent, last := key[:len(key)-1], key[len(key)-1]
		var near []string
		for _, n := range suggest.Nearest(last, knownKeys(reflect.TypeOf(v), parent)) {
			near = append(near, append(append(toml.Key{}, parent...), n).String())
		}
		return &Error{Name: name, Line: line, Col: col, Key: key.String(), Err: fmt.Errorf("unknown key %q%s", key.String(), suggest.Phrase(near))}
	}
	return nil
}

// duplicateText is toml's words for a key or table set twice: `Key 'search.order' has already been
// defined.` A test holds the pattern to the toml module in go.mod.
var duplicateText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Key '(.+)' has already been defined\.$`) })

// parseError is a syntax error, in this package's words where toml's are its own: a key set twice
// names the line that set it first.
func parseError(name string, data []byte, perr toml.ParseError) error {
	e := &Error{Name: name, Line: perr.Position.Line, Col: perr.Position.Col, Err: errors.New(perr.Message)}
	if at := perr.Position.Start; at >= 0 && at < len(data) {
		// Where the offending byte is: toml counts a newline it stops at as the next line's.
		e.Line, e.Col = lineCol(data, at)
	}
	m := duplicateText().FindStringSubmatch(perr.Message)
	if m == nil {
		return e
	}
	key := splitKey(m[1])
	e.Key = key.String()
	msg := fmt.Sprintf("key %q is set twice", e.Key)
	if first, _ := Position(data, key); first > 0 && first != e.Line {
		msg += fmt.Sprintf(" (first on line %d)", first)
	}
	if lines := strings.Split(string(data), "\n"); e.Line > 0 && e.Line <= len(lines) {
		l := lines[e.Line-1]
		e.Col = len(l) - len(strings.TrimLeft(l, " \t")) + 1
	}
	e.Err = errors.New(msg)
	return e
}

// lineCol is the 1-based line and column (in characters) of the byte at offset at in data.
func lineCol(data []byte, at int) (int, int) {
	before := data[:at]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[start:]) + 1
}

// knownKeys are the keys the table at key may hold, for a did-you-mean: the toml tags of the struct
// that decodes it (a map's keys are anyone's: none).
func knownKeys(t reflect.Type, key toml.Key) []string {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice) {
		t = t.Elem()
	}
	if t == nil {
		return nil
	}
	if len(key) > 0 {
		switch t.Kind() {
		case reflect.Map:
			return knownKeys(t.Elem(), key[1:])
		case reflect.Struct:
			for i := 0; i < t.NumField(); i++ {
				if f := t.Field(i); tomlName(f) == key[0] {
					return knownKeys(f.Type, key[1:])
				}
			}
		}
		return nil
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if n := tomlName(t.Field(i)); n != "" && n != "-" {
			names = append(names, n)
		}
	}
	return names
}

func tomlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	if n, _, _ := strings.Cut(f.Tag.Get("toml"), ","); n != "" {
		return n
	}
	return f.Name
}

// toml's words for a value it cannot decode: `toml: line 2 (last key "search.order"): incompatible
// types: TOML value has type string; destination has type slice`. A test holds the pattern to the
// toml module in go.mod.
var (
	decodeErrorText = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^toml: (?:line (\d+) )?(?:\(last key "((?:[^"\\]|\\.)*)"\): )?(.*)$`)
	})
	typeErrorText = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^incompatible types: TOML value has type (.+); destination has type (.+)$`)
	})
)

// decodeError says what toml's decoding error err means, in this package's words where it can.
func decodeError(name string, data []byte, err error) error {
	m := decodeErrorText().FindStringSubmatch(err.Error())
	if m == nil {
		return &Error{Name: name, Err: err}
	}
	e := &Error{Name: name, Err: errors.New(m[3])}
	e.Line, _ = strconv.Atoi(m[1])
	if key, uerr := strconv.Unquote(`"` + m[2] + `"`); uerr == nil && key != "" {
		e.Key = key
		if line, col := Position(data, splitKey(key)); line > 0 {
			e.Line, e.Col = line, col
		}
	}
	if e.Line > 0 && e.Col == 0 {
		e.Col = 1
	}
	if t := typeErrorText().FindStringSubmatch(m[3]); t != nil && e.Key != "" {
		e.Err = fmt.Errorf("%s: expected %s, found %s", e.Key, typeWord(t[2]), typeWord(t[1]))
	}
	return e
}

// typeWord names a type as toml's error writes it (a Go type, or its word for a destination) in
// TOML's terms.
func typeWord(t string) string {
	switch {
	case t == "string", strings.HasPrefix(t, "primitive"):
		return "a string"
	case t == "bool", t == "boolean":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), t == "integer":
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"), t == "slice":
		return "an array"
	case strings.HasPrefix(t, "map"), t == "struct":
		return "a table"
	case strings.Contains(t, "time."), strings.Contains(t, "Local"):
		return "a date or time"
	}
	return t
}

// splitKey splits a dotted key as toml.Key.String writes it: parts with a dot or a space are quoted.
func splitKey(s string) toml.Key {
	var key toml.Key
	for s != "" {
		if s[0] == '"' {
			if q, err := strconv.QuotedPrefix(s); err == nil {
				part, _ := strconv.Unquote(q)
				key = append(key, part)
				s = strings.TrimPrefix(s[len(q):], ".")
				continue
			}
		}
		part, rest, _ := strings.Cut(s, ".")
		key, s = append(key, part), rest
	}
	return key
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
	if len(key) == 0 {
		return 0, 0
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
