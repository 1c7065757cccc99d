//go:build !unix

package cachefile

const openFlags = 0
