//go:build !pathfinder_static

package driver

import (
	"errors"
	"strings"

	"github.com/ebitengine/purego"

	"github.com/pathfinder-dev/pathfinder/internal/loader"
)

// errCannotLoad is nil where this build can load libraries, and otherwise says why it cannot.
var errCannotLoad error

// dlopenFirst loads the first library of libs that loads. The caller must hold its OS thread
// (runtime.LockOSThread): dlerror's message belongs to the thread that called dlopen. The error
// names each library once: "libnvidia-ml.so.1: cannot open shared object file: …".
func dlopenFirst(libs []string) (handle uintptr, path string, err error) {
	var msgs []string
	for _, l := range libs {
		h, err := loader.Dlopen(l, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			return h, l, nil
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, l+":") {
			msg = l + ": " + msg
		}
		msgs = append(msgs, msg)
	}
	return 0, "", errors.New(strings.Join(msgs, "; "))
}

// bind points *fptr at symbol name, or reports false when the library lacks it. purego's
// RegisterLibFunc would panic instead, and a missing symbol (an older driver) is a fact to report.
func bind(handle uintptr, name string, fptr any) bool {
	addr, err := purego.Dlsym(handle, name)
	if err != nil || addr == 0 {
		return false
	}
	purego.RegisterFunc(fptr, addr)
	return true
}
