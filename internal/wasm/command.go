package wasm

// errCommand is why a module built as a command is refused. A Go plugin built without
// -buildmode=c-shared is one: its exports trap (unreachable) when called, as its runtime was never
// started. Compiling a Go module costs seconds, so this is told from its export section, before.
const errCommand = "built as a command (it exports _start, not _initialize): a plugin is a reactor; " +
	"in Go, build it with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o NAME.wasm . (in C, -mexec-model=reactor)"

// commandModule reports whether the module wasm exports a function _start and none called
// _initialize. A module it cannot read is left to the compiler to refuse.
func commandModule(wasm []byte) bool {
	exports, ok := exportedFunctions(wasm)
	return ok && exports["_start"] && !exports["_initialize"]
}

// exportedFunctions reads the names of the functions the binary module wasm exports: its export
// section, found by the sections' sizes (the WebAssembly core specification's binary format, 5.5).
func exportedFunctions(wasm []byte) (map[string]bool, bool) {
	const exportSection, funcKind = 7, 0
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, false
	}
	r := reader{b: wasm[8:]}
	for len(r.b) > 0 {
		id, ok1 := r.byte()
		size, ok2 := r.uleb()
		body, ok3 := r.take(size)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		if id != exportSection {
			continue
		}
		s := reader{b: body}
		n, ok := s.uleb()
		out := map[string]bool{}
		for range n {
			nameLen, ok1 := s.uleb()
			name, ok2 := s.take(nameLen)
			kind, ok3 := s.byte()
			_, ok4 := s.uleb()
			if !ok || !ok1 || !ok2 || !ok3 || !ok4 {
				return nil, false
			}
			if kind == funcKind {
				out[string(name)] = true
			}
		}
		return out, true
	}
	return map[string]bool{}, true
}

// reader reads a module's bytes; each read reports whether there was enough to read.
type reader struct{ b []byte }

func (r *reader) byte() (byte, bool) {
	if len(r.b) == 0 {
		return 0, false
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, true
}

func (r *reader) uleb() (uint64, bool) {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c, ok := r.byte()
		if !ok {
			return 0, false
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}

func (r *reader) take(n uint64) ([]byte, bool) {
	if n > uint64(len(r.b)) {
		return nil, false
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b, true
}
