package resultcache

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// decodeEntry is json.Unmarshal of a result-cache entry. A warm process reads one entry per name it
// is asked for, and encoding/json's reflection was the largest part of that, so the layout Write
// writes is read here by hand. Only that layout is: keys in their exact case and each once, the
// escapes json.Marshal writes, valid UTF-8. Anything else goes to json.Unmarshal, so an entry never
// decodes differently from what encoding/json would make of it (FuzzDecodeEntry compares the two).
func decodeEntry(data []byte, c *Entry) error {
	d := entryDecoder{b: data, s: string(data)}
	if d.entry(c) {
		return nil
	}
	*c = Entry{}
	return json.Unmarshal(data, c)
}

// entryDecoder reads JSON from b; each method says false where the input is not what it reads, and
// then the decoder is not used any further.
type entryDecoder struct {
	b []byte
	s string // b as a string: the strings without escapes are cut from it, not each allocated
	i int
}

var entryKeys = []string{"version", "key", "library", "error", "live", "sites", "seen", "ignored"}

func (d *entryDecoder) entry(c *Entry) bool {
	ok := d.object(entryKeys, func(k int) bool {
		switch k {
		case 0:
			return d.int(&c.Version)
		case 1:
			return d.string(&c.Key)
		case 2:
			if d.null() {
				return true
			}
			c.Library = &Library{}
			return d.library(c.Library)
		case 3:
			if d.null() {
				return true
			}
			c.Err = &Error{}
			return d.Error(c.Err)
		case 4:
			return d.strings(&c.Live)
		case 5:
			return d.string(&c.Sites)
		case 6:
			return array(d, &c.Seen, d.observation)
		default:
			return array(d, &c.Ignored, d.ignored)
		}
	})
	d.space()
	return ok && d.i == len(d.b)
}

var (
	libraryKeys     = []string{"name", "kind", "path", "real_path", "found_via", "step", "load_problem", "cuda", "version", "version_from", "compat", "notes", "passed_over"}
	errorKeys       = []string{"looked", "attempts"}
	ignoredKeys     = []string{"step", "name", "value", "reason"}
	attemptKeys     = []string{"step", "path", "reason"}
	observationKeys = []string{"root", "path", "what", "seen"}
)

func (d *entryDecoder) library(l *Library) bool {
	return d.object(libraryKeys, func(k int) bool {
		switch k {
		case 0:
			return d.string(&l.Name)
		case 1:
			var s string
			ok := d.string(&s)
			l.Kind = abi.Kind(s)
			return ok
		case 2:
			return d.string(&l.Path)
		case 3:
			return d.string(&l.RealPath)
		case 4:
			return d.string(&l.FoundVia)
		case 5:
			return d.string(&l.Step)
		case 6:
			return d.string(&l.LoadProblem)
		case 7:
			return d.string(&l.CUDA)
		case 8:
			return d.string(&l.Version)
		case 9:
			return d.string(&l.VersionFrom)
		case 10:
			return d.string(&l.Compat)
		case 11:
			return d.strings(&l.Notes)
		}
		return array(d, &l.PassedOver, d.attempt)
	})
}

func (d *entryDecoder) Error(e *Error) bool {
	return d.object(errorKeys, func(k int) bool {
		if k == 0 {
			return d.strings(&e.Looked)
		}
		return array(d, &e.Attempts, d.attempt)
	})
}

func (d *entryDecoder) attempt(a *search.Attempt) bool {
	return d.object(attemptKeys, func(k int) bool {
		switch k {
		case 0:
			return d.string(&a.Step)
		case 1:
			return d.string(&a.Path)
		}
		return d.string(&a.Reason)
	})
}

func (d *entryDecoder) ignored(in *Ignored) bool {
	return d.object(ignoredKeys, func(k int) bool {
		return d.string([]*string{&in.Step, &in.Name, &in.Value, &in.Reason}[k])
	})
}

func (d *entryDecoder) observation(o *observe.Observation) bool {
	return d.object(observationKeys, func(k int) bool {
		switch k {
		case 0:
			return d.string(&o.Root)
		case 1:
			return d.string(&o.Path)
		case 2:
			return d.string(&o.What)
		}
		return d.string(&o.Seen)
	})
}

func (d *entryDecoder) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
}

// punct reads the byte c after any white space.
func (d *entryDecoder) punct(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// null reads a null if one is next.
func (d *entryDecoder) null() bool {
	d.space()
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// object reads an object whose keys are among keys, each at most once, calling field with the
// key's index to read its value.
func (d *entryDecoder) object(keys []string, field func(int) bool) bool {
	if !d.punct('{') {
		return false
	}
	if d.punct('}') {
		return true
	}
	var seen uint64
	for {
		var k string
		if !d.string(&k) || !d.punct(':') {
			return false
		}
		n := -1
		for j, key := range keys {
			if key == k {
				n = j
			}
		}
		if n < 0 || seen&(1<<n) != 0 || !field(n) {
			return false
		}
		seen |= 1 << n
		if d.punct('}') {
			return true
		}
		if !d.punct(',') {
			return false
		}
	}
}

// array reads null (a nil slice) or an array, each element by elem.
func array[T any](d *entryDecoder, out *[]T, elem func(*T) bool) bool {
	if d.null() {
		*out = nil
		return true
	}
	if !d.punct('[') {
		return false
	}
	list := []T{}
	if d.punct(']') {
		*out = list
		return true
	}
	for {
		var v T
		if !elem(&v) {
			return false
		}
		list = append(list, v)
		if d.punct(']') {
			*out = list
			return true
		}
		if !d.punct(',') {
			return false
		}
	}
}

func (d *entryDecoder) strings(out *[]string) bool {
	return array(d, out, d.string)
}

// int reads a decimal integer without a fraction or an exponent.
func (d *entryDecoder) int(out *int) bool {
	d.space()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return false
	}
	lit := string(d.b[start:d.i])
	if len(lit) > 1 && (lit[0] == '0' || lit[:2] == "-0") { // JSON has no leading zeros
		return false
	}
	n, err := strconv.Atoi(lit)
	*out = n
	return err == nil
}

// string reads a string: valid UTF-8 with the escapes json.Marshal writes (\u only outside the
// surrogates, whose pairing encoding/json repairs in its own way).
func (d *entryDecoder) string(out *string) bool {
	if !d.punct('"') {
		return false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			if !utf8.Valid(d.b[start:d.i]) {
				return false
			}
			*out = d.s[start:d.i]
			d.i++
			return true
		case c == '\\':
			return d.escaped(out, start)
		case c < ' ':
			return false
		}
		d.i++
	}
	return false
}

// escaped finishes a string that has an escape at d.i, begun at start.
func (d *entryDecoder) escaped(out *string, start int) bool {
	buf := make([]byte, 0, 2*(d.i-start)+16)
	buf = append(buf, d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				return false
			}
			*out = string(buf)
			d.i++
			return true
		case c < ' ':
			return false
		case c != '\\':
			buf = append(buf, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return false
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			if d.i+4 > len(d.b) {
				return false
			}
			r, err := strconv.ParseUint(string(d.b[d.i:d.i+4]), 16, 16)
			if err != nil || r >= 0xD800 && r <= 0xDFFF {
				return false
			}
			buf = utf8.AppendRune(buf, rune(r))
			d.i += 4
		default:
			return false
		}
	}
	return false
}
