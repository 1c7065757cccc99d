//go:build unix

package sandboxfs

import "syscall"

// openFlags make an open that cannot block (a FIFO swapped in after the stat) and cannot make a
// terminal the process's controlling one.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
