//go:build unix

package cachefile

import "syscall"

// openFlags make an open that does not wait for a writer when a FIFO stands where a file should.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
