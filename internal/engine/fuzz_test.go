//go:build linux

package engine

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakeelf"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// FuzzResponse feeds any bytes to the host as a plugin's response, decodes them as the host does,
// and validates every candidate for every kind: validation must never panic, and must never accept
// a path outside the granted root it names, nor one whose links lead to anything but a file (a
// directory for a header set) of the kind, or to a stub, or into /proc, /sys or /dev. In the input, {root}, {nested}, {other} and {outside} stand for the fixture's
// directories: two granted roots (one with a granted directory inside), and one that is not granted.
//
//	go test -run '^$' -fuzz '^FuzzResponse$' -fuzztime 10s ./internal/engine/
func FuzzResponse(f *testing.F) {
	so := elfLib(f, "libcudart.so.13")
	base := f.TempDir()
	root, other, outside := filepath.Join(base, "root"), filepath.Join(base, "other"), filepath.Join(base, "outside")
	nested := filepath.Join(root, "nested")
	filetree.Put(f, root, "lib/libcudart.so.13", so)
	filetree.Put(f, root, "lib/stubs/libcuda.so", so)
	filetree.Put(f, root, "lib/libtext.so", []byte("INPUT(libcudart.so.13)\n"))
	filetree.Put(f, root, "lib/lib32.so", fakeelf.Header(elf.ELFCLASS32, elf.EM_386, elf.ET_DYN))
	filetree.Put(f, root, "lib/sub/keep", nil)
	filetree.Put(f, root, "include/cuda_runtime.h", []byte("#pragma once\n"))
	filetree.Put(f, root, "bin/nvcc", so)
	filetree.Put(f, root, "lib/libcudadevrt.a", []byte("!<arch>\n"))
	filetree.Put(f, root, "nvvm/libdevice/libdevice.10.bc", []byte("BC\xc0\xde"))
	filetree.Put(f, nested, "lib/libnested.so.1", so)
	filetree.Put(f, other, "lib64/libother.so.1", so)
	filetree.Put(f, outside, "libsecret.so", so)
	filetree.Put(f, outside, "include/cuda_runtime.h", nil)
	for link, target := range map[string]string{
		"lib/libout.so":     filepath.Join(outside, "libsecret.so"), // absolute, out
		"lib/librelout.so":  "../../outside/libsecret.so",           // relative, out
		"lib/libin.so":      "libcudart.so.13",                      // relative, in
		"lib/libabsin.so":   filepath.Join(root, "lib/libcudart.so.13"),
		"lib/updir":         "../../outside", // a directory out
		"lib/loop.so":       "loop.so",
		"include/outinc":    filepath.Join(outside, "include"),
		"lib/libnested.so":  "../nested/lib/libnested.so.1",
		"lib/libtoother.so": filepath.Join(other, "lib64/libother.so.1"),
		"lib/libstub.so":    "stubs/libcuda.so", // a soname link to a stub
		"lib/libzero.so":    "/dev/zero",
		"lib/libself.so":    "/proc/self/exe",
	} {
		filetree.Symlink(f, target, filepath.Join(root, link))
	}
	if err := syscall.Mkfifo(filepath.Join(root, "lib/libfifo.so"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.Link(filepath.Join(outside, "libsecret.so"), filepath.Join(root, "lib/libhard.so")); err != nil {
		f.Fatal(err)
	}

	finder := newFinder(f, nil, "")
	g := &candidate.Granted{}
	for _, dir := range []string{root, nested, other} {
		r, err := finder.openRoot(dir, nil)
		if err != nil {
			f.Fatal(err)
		}
		g.Dirs = append(g.Dirs, candidate.Dir{Path: dir, Root: r})
	}
	entries := []*catalog.Entry{
		{Kind: DynamicLib, Descriptor: abi.Descriptor{Name: "cudart", LinuxSonames: []string{"libcudart.so.13"}}},
		{Kind: HeaderDir, Descriptor: abi.Descriptor{Name: "cudart", LinuxFiles: []string{"cuda_runtime.h"}}},
		{Kind: Binary, Descriptor: abi.Descriptor{Name: "nvcc", LinuxFiles: []string{"nvcc"}}},
		{Kind: StaticLib, Descriptor: abi.Descriptor{Name: "cudadevrt", LinuxFiles: []string{"libcudadevrt.a"}}},
		{Kind: Bitcode, Descriptor: abi.Descriptor{Name: "libdevice", LinuxFiles: []string{"libdevice.10.bc"}}},
	}
	linux := abi.Platform{OS: "linux", Arch: "amd64", Libc: "glibc"}
	if finder.platform.Arch == "arm64" {
		linux.Arch = "arm64"
	}

	// The fixture is what the seeds take it for: a test that cannot accept anything cannot fail.
	for p, want := range map[string]bool{
		filepath.Join(root, "lib/libcudart.so.13"): true, filepath.Join(root, "lib/libin.so"): true,
		filepath.Join(nested, "lib/libnested.so.1"): true, filepath.Join(root, "lib/libout.so"): true,
		filepath.Join(root, "lib/updir/libsecret.so"): true, filepath.Join(root, "lib/libtoother.so"): true,
		filepath.Join(root, "lib/libstub.so"): false, filepath.Join(root, "lib/libzero.so"): false,
		filepath.Join(root, "lib/libself.so"): false, filepath.Join(root, "lib/loop.so"): false,
	} {
		if _, why := check(g, p, entries[0], linux); (why == "") != want {
			f.Fatalf("check(%s): %q, want accepted %v", p, why, want)
		}
	}

	// Seeds: what the first-party steps answer, and what the hostile suite's plugins do.
	for _, s := range []string{
		`{"candidates":[{"path":"{root}/lib/libcudart.so.13","found_via":"site-packages"}],"tried":[{"path":"{root}/lib64","reason":"no such directory"}]}`,
		`{"candidates":[{"path":"{root}/include","found_via":"CUDA_HOME","note":"holds cuda_runtime.h"}]}`,
		`{"candidates":[{"path":"{root}/bin/nvcc","found_via":"conda"},{"path":"{root}/lib/libcudadevrt.a"},{"path":"{root}/nvvm/libdevice/libdevice.10.bc"}]}`,
		`{"candidates":[{"path":"{nested}/lib/libnested.so.1"},{"path":"{other}/lib64/libother.so.1"},{"path":"{root}/lib/libnested.so"},{"path":"{root}/lib/libtoother.so"}]}`,
		`{"candidates":[{"path":"{root}/../outside/libsecret.so"},{"path":"{outside}/libsecret.so"},{"path":"{root}/lib/libout.so"},{"path":"{root}/lib/librelout.so"},{"path":"{root}/lib/updir/libsecret.so"},{"path":"{root}/lib/libhard.so"}]}`,
		`{"candidates":[{"path":"{root}/lib/libin.so"},{"path":"{root}/lib/libabsin.so"},{"path":"{root}/lib/loop.so"},{"path":"{root}/include/outinc"}]}`,
		`{"candidates":[{"path":"{root}/lib/libstub.so"},{"path":"{root}/lib/libzero.so"},{"path":"{root}/lib/libself.so"}]}`,
		`{"candidates":[{"path":"{root}/lib/stubs/libcuda.so"},{"path":"{root}/lib/libfifo.so"},{"path":"{root}/lib/sub"},{"path":"{root}/lib/lib32.so"},{"path":"{root}/lib/libtext.so"}]}`,
		`{"candidates":[{"path":"lib/libcudart.so.13"},{"path":""},{"path":"{root}/lib/libcudart.so.13\u0000.txt"},{"path":"{root}//lib/./libcudart.so.13"},{"path":"/"},{"path":"{root}"},{"path":"{root}/"}]}`,
		"{\"candidates\":[{\"path\":\"/\xff\xfe/lib\xc3cudart.so.13\",\"found_via\":\"\xed\xa0\x80\"}],\"tried\":[{\"path\":\"\xff\",\"reason\":\"\xc0\xaf\"}]}",
		`{"error":"could not search"}`,
		"\x00\xff<html>this is not JSON</html>",
		`{"candidates":[{"path":"{root}/` + strings.Repeat("a/", 2100) + `x"}]}`,
	} {
		f.Add([]byte(s))
	}
	replacer := strings.NewReplacer("{root}", root, "{nested}", nested, "{other}", other, "{outside}", outside)
	f.Fuzz(func(t *testing.T, data []byte) {
		var resp abi.Response
		if json.Unmarshal([]byte(replacer.Replace(string(data))), &resp) != nil {
			return
		}
		if len(resp.Candidates) > 64 {
			resp.Candidates = resp.Candidates[:64]
		}
		for _, c := range resp.Candidates {
			for _, e := range entries {
				if _, why := check(g, c.Path, e, linux); why == "" {
					checkAccepted(t, g, c.Path, e.Kind)
				}
			}
		}
	})
}

// checkAccepted fails t unless p, accepted for kind, is in the granted root validation named and
// leads, through every symlink, to what kind needs: no stub, nothing in /proc, /sys or /dev.
func checkAccepted(t *testing.T, g *candidate.Granted, p string, kind Kind) {
	t.Helper()
	root, _ := g.DirOf(p)
	if root == "" || filepath.Clean(p) != p || !strings.HasPrefix(p, root+"/") || strings.Contains(p, "/stubs/") {
		t.Fatalf("accepted %q (%s) outside the granted roots", p, kind)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatalf("accepted %q (%s), which does not resolve: %v", p, kind, err)
	}
	if strings.Contains(real, "/stubs/") || slices.ContainsFunc([]string{"/proc/", "/sys/", "/dev/"}, func(f string) bool { return strings.HasPrefix(real, f) }) {
		t.Fatalf("accepted %q (%s): it leads to %s", p, kind, real)
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		t.Fatalf("accepted %q (%s): %v", p, kind, err)
	case kind == HeaderDir && !fi.IsDir(), kind != HeaderDir && !fi.Mode().IsRegular():
		t.Fatalf("accepted %q (%s): mode %s", p, kind, fi.Mode())
	case kind == DynamicLib:
		if b, _ := os.ReadFile(real); !bytes.HasPrefix(b, []byte("\x7fELF\x02")) {
			t.Fatalf("accepted %q as a library: not a 64-bit ELF file", p)
		}
	}
}
