//go:build !unix

package sandboxfs

// openFlags: opening a file on Windows does not wait for a writer.
const openFlags = 0
