package abi_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/plugins/canary"
	"github.com/pathfinder-dev/pathfinder/plugins/conda"
	"github.com/pathfinder-dev/pathfinder/plugins/envroots"
	"github.com/pathfinder-dev/pathfinder/plugins/programfiles"
	"github.com/pathfinder-dev/pathfinder/plugins/wheels"
)

// The first-party steps, registered as the builtin module registers them, run natively here.
func init() {
	for _, p := range []abi.Plugin{canary.Plugin, conda.Plugin, envroots.Plugin, programfiles.Plugin, wheels.Plugin} {
		abi.Register(p)
	}
}

// fuzzEnv is a machine with a wheel, a conda prefix, a toolkit, a cuDNN install and a Program Files
// tree; /cuda is the toolkit root the host would grant the canary step, where the loader finds cudart.
var fuzzEnv = abi.Env{
	FS: fstest.MapFS{
		"site/nvidia/cu13/lib/libcudart.so.13":             {Data: []byte("\x7fELF")},
		"site/nvidia/cu13/lib/libnvrtc.so.13":              {Mode: fs.ModeDir},
		"conda/lib/libcudart.so.12":                        {Data: []byte("\x7fELF")},
		"conda/include/cuda_runtime.h":                     {},
		"cuda/lib64/libcudart.so.13":                       {Data: []byte("\x7fELF")},
		"cuda/nvvm/lib64/libnvvm.so.4":                     {Data: []byte("\x7fELF")},
		"cuda/targets/x86_64-linux/lib/libcudart.so.13":    {Data: []byte("\x7fELF")},
		"cuda/targets/x86_64-linux/include/cuda_runtime.h": {},
		"cuda/include/cuda_runtime.h":                      {},
		"cuda/bin/nvcc":                                    {Data: []byte("#!/bin/sh\n")},
		"cuda/bin/x64/cudart64_13.dll":                     {Data: []byte("MZ")},
		"cuda/lib64/libcudadevrt.a":                        {Data: []byte("!<arch>\n")},
		"cuda/nvvm/libdevice/libdevice.10.bc":              {Data: []byte("BC\xc0\xde")},
		"cudnn/lib/libcudnn.so.9":                          {Data: []byte("\x7fELF")},
		"pf/NVIDIA/CUDNN/v9.10/bin/12.9/x64/cudnn64_9.dll": {Data: []byte("MZ")},
		"pf/NVIDIA/CUDNN/v9.9/bin/CUDNN64_9.DLL":           {Data: []byte("MZ")},
	},
	Getenv: func(k string) string {
		return map[string]string{"CONDA_PREFIX": "/conda", "CUDA_HOME": "/cuda", "CUDA_PATH": "/cuda/",
			"ProgramW6432": "/pf", "CUDNN_PATH": "/cudnn", "NCCL_HOME": "relative/nccl"}[k]
	},
	Logf: func(string, ...any) {},
}

var fuzzRoots = []abi.Root{
	{Path: "/site", Role: abi.RoleSitePackages}, {Path: "/conda", Role: "env:CONDA_PREFIX"},
	{Path: "/cuda", Role: "env:CUDA_HOME"}, {Path: "/pf", Role: "env:ProgramW6432"}, {Path: "/nowhere", Role: abi.RoleSitePackages},
	{Path: "/cuda", Role: abi.RoleCanaryRoot},
}

// FuzzRequest decodes any bytes as a request: what decodes must encode and decode to the same
// request, and running it through abi.Run against every first-party step must not panic, must
// answer, and may propose only what exists. Seeds are the builtin NVIDIA pack's descriptors and,
// when ../shared/reference is checked out, cuda.pathfinder's catalog, each for every step.
//
//	go test -run '^$' -fuzz '^FuzzRequest$' -fuzztime 10s ./abi/
func FuzzRequest(f *testing.F) {
	steps := []string{"wheels", "conda", "envroots", "programfiles", "canary"}
	platforms := []abi.Platform{{OS: "linux", Arch: "amd64", Libc: "glibc"}, {OS: "windows", Arch: "amd64"}}
	found := 0
	add := func(i int, kind abi.Kind, lib abi.Descriptor) {
		for _, step := range steps {
			req := abi.Request{ABI: abi.Version, Step: step, Entry: step, Kind: kind, Platform: platforms[i%2],
				Library: lib, Roots: fuzzRoots, Options: map[string]string{"k": "v"}}
			b, err := json.Marshal(&req)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
			if len(abi.Run(fuzzEnv, &req).Candidates) > 0 {
				found++
			}
		}
	}
	pack, err := catalog.New(catalog.Pack{Name: "nvidia.toml", Data: builtin.NVIDIAPack()})
	if err != nil {
		f.Fatal(err)
	}
	n := 0
	for _, k := range catalog.Kinds {
		for _, lib := range pack.Descriptors(k.Kind) {
			add(n, k.Kind, lib)
			n++
		}
	}
	// The fixture is what the seeds take it for: a test that never finds anything cannot fail.
	if n < 50 || found < 11 {
		f.Fatalf("%d descriptors in the builtin pack, finding %d candidates in the fixture; want 50 and 11", n, found)
	}
	if b, err := os.ReadFile("../../shared/reference/cuda-pathfinder/catalog-1.6.0.json"); err == nil {
		var ref struct {
			DynamicLibs []abi.Descriptor `json:"dynamic_libs"`
		}
		if err := json.Unmarshal(b, &ref); err != nil {
			f.Fatal(err)
		}
		for _, lib := range ref.DynamicLibs {
			add(n, abi.KindDynamicLib, lib)
			n++
		}
	}
	f.Add([]byte(`{"abi":3,"step":"wheels"}`)) // another version than the host's
	f.Add([]byte(`{"abi":2,"step":"nope","entry":"nope"}`))
	f.Add([]byte(`{"abi":2,"step":"programfiles","kind":"dynamic-lib","platform":{"os":"windows","arch":"amd64"},"library":{"name":"x","windows_dlls":["cudnn64_9.dll"],"program_files_dirs_windows":["NVIDIA/CUDNN/v9.*/bin/*/{triple}","../..","/abs","NVIDIA/[","NVIDIA\\CUDNN"]}}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		var req abi.Request
		if json.Unmarshal(data, &req) != nil {
			return
		}
		b1, err := json.Marshal(&req)
		if err != nil {
			t.Fatalf("a decoded request does not encode: %v", err)
		}
		var again abi.Request
		if err := json.Unmarshal(b1, &again); err != nil {
			t.Fatalf("an encoded request does not decode: %v\n%s", err, b1)
		}
		if b2, _ := json.Marshal(&again); !bytes.Equal(b1, b2) {
			t.Fatalf("round trip changed the request:\n%s\n%s", b1, b2)
		}

		resp := abi.Run(fuzzEnv, &req)
		if resp == nil {
			t.Fatal("no response")
		}
		if req.ABI != abi.Version && (resp.Error == "" || len(resp.Candidates) > 0) {
			t.Fatalf("abi %d: answered %+v", req.ABI, resp)
		}
		for _, c := range resp.Candidates {
			fi, err := fuzzEnv.Stat(c.Path)
			if err != nil {
				t.Fatalf("%s proposed %q, which does not exist: %v", req.Step, c.Path, err)
			}
			if fi.IsDir() != (req.Kind == abi.KindHeaderDir) {
				t.Fatalf("%s proposed %q (a directory: %v) for a %s", req.Step, c.Path, fi.IsDir(), req.Kind)
			}
		}
		if _, err := json.Marshal(resp); err != nil {
			t.Fatalf("the response does not encode: %v", err)
		}
	})
}
