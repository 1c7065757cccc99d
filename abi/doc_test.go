package abi_test

import (
	"fmt"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// A plugin is one search function over an Env and a Request. The same function runs under wasm in
// the host and natively here, over an in-memory file system.
func Example() {
	search := func(env abi.Env, req *abi.Request) *abi.Response {
		resp := &abi.Response{}
		root := env.Lookupenv("OPT_CUDA")
		abi.Find(env, req, resp, []string{root + "/lib64"})
		return resp
	}
	env := abi.Env{
		FS:     fstest.MapFS{"opt/cuda/lib64/libcudart.so.13": {Data: []byte("\x7fELF")}},
		Getenv: func(k string) string { return map[string]string{"OPT_CUDA": "/opt/cuda"}[k] },
	}
	req := &abi.Request{
		ABI:      abi.Version,
		Kind:     abi.KindDynamicLib,
		Platform: abi.Platform{OS: "linux", Arch: "amd64"},
		Library:  abi.Descriptor{Name: "cudart", LinuxSonames: []string{"libcudart.so.13", "libcudart.so.12"}},
	}
	resp := search(env, req)
	for _, c := range resp.Candidates {
		fmt.Println(c.Path)
	}
	// Output: /opt/cuda/lib64/libcudart.so.13
}
