// Package bounded holds the buffer that keeps what a child process or a wasm guest prints, up to
// a limit, so that a runaway program cannot fill the host's memory.
package bounded

import "bytes"

// Buffer keeps the first Limit bytes written to it and discards the rest; a write never fails. (The
// bytes.Buffer is not embedded: its ReadFrom, which io.Copy prefers, would bypass the limit.)
type Buffer struct {
	buf   bytes.Buffer
	Limit int
}

func (b *Buffer) Write(p []byte) (int, error) {
	if room := b.Limit - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Bytes is what was kept.
func (b *Buffer) Bytes() []byte { return b.buf.Bytes() }

// String is what was kept, as a string.
func (b *Buffer) String() string { return b.buf.String() }

// Reset forgets what was kept; the limit stays.
func (b *Buffer) Reset() { b.buf.Reset() }
