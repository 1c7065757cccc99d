//go:build !unix

package observe

// openFlags: opening a file on Windows does not wait for a writer.
const openFlags = 0
