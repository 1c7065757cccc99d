//go:build wasip1

package abi

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"
)

// Buffers handed to the host stay referenced here until the next call, so the Go GC cannot move or
// free them while the host reads or writes them.
var (
	requestBuf  []byte
	responseBuf []byte
)

//go:wasmexport pathfinder_abi_version
func exportVersion() int32 { return Version }

//go:wasmexport pathfinder_alloc
func exportAlloc(size uint32) uint32 {
	requestBuf = make([]byte, size)
	if size == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&requestBuf[0])))
}

//go:wasmexport pathfinder_search
func exportSearch(ptr, size uint32) uint64 {
	var resp *Response
	var req Request
	if err := json.Unmarshal(requestBuf[:size:size], &req); err != nil {
		resp = &Response{Error: fmt.Sprintf(textBadRequest, err)}
	} else {
		resp = Run(Env{FS: os.DirFS("/"), Getenv: os.Getenv, Logf: hostLogf, SystemResolve: systemResolve}, &req)
	}
	requestBuf = nil
	return reply(resp)
}

//go:wasmexport pathfinder_describe
func exportDescribe() uint64 { return reply(describe()) }

func reply(v any) uint64 {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(Response{Error: "cannot encode response: " + err.Error()})
	}
	responseBuf = b
	// The Go guest does not collect garbage between exports on its own; letting the scheduler run
	// here keeps its memory flat over thousands of calls.
	runtime.Gosched()
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&responseBuf[0])))<<32 | uint64(len(b))
}

//go:wasmimport pathfinder log
func hostLog(ptr unsafe.Pointer, size uint32)

func hostLogf(format string, args ...any) {
	b := []byte(fmt.Sprintf(format, args...))
	if len(b) > 0 {
		hostLog(unsafe.Pointer(&b[0]), uint32(len(b)))
	}
}

//go:wasmimport pathfinder system_resolve
func hostSystemResolve(name unsafe.Pointer, nameLen uint32, out unsafe.Pointer, outCap uint32) int32

func systemResolve(name string) (string, error) {
	if name == "" {
		return "", errors.New(textEmptyName)
	}
	in := []byte(name)
	out := make([]byte, MaxPathBytes)
	n := hostSystemResolve(unsafe.Pointer(&in[0]), uint32(len(in)), unsafe.Pointer(&out[0]), uint32(len(out)))
	switch {
	case n == ResolveDenied:
		return "", ErrNotGranted
	case n == ResolveNotFound:
		return "", errors.New(textLoaderNotFound)
	case n < 0 || int(n) > len(out):
		return "", fmt.Errorf(textHostAnswered, n)
	}
	return string(out[:n]), nil
}
