package observe

import "os"

// StatInDir is Check's one-fstatat path, one checker behind every call of see, for the tests
// outside the package: they compare it with the sandbox's own stat (sandboxfs.See), which imports
// this package.
func StatInDir() (see func(Observation) (string, bool), done func()) {
	c := &checker{roots: map[string]*os.Root{}}
	return c.statInDir, c.close
}
