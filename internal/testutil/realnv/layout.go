package realnv

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Lib is the shared object soname (or any file name) as the package unpacked it: under
// usr/lib/x86_64-linux-gnu, or its nvidia/current sub-directory for the driver's packages.
func (p Package) Lib(name string) string {
	for _, dir := range []string{"usr/lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu/nvidia/current"} {
		if f := p.Path(dir + "/" + name); exists(f) {
			return f
		}
	}
	return p.Path("usr/lib/x86_64-linux-gnu/" + name) // absent: Place and Copy say so
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// Place puts the file src (symlinks followed) at dst as a hard link: the same inode, so the loader
// takes every placed link for one library, and a layout costs no disk. Where dst is on another
// filesystem it copies instead. The directories above dst are made.
func Place(t testing.TB, src, dst string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		t.Fatalf("realnv: %v", err)
	}
	mkdirAbove(t, dst)
	err = os.Link(real, dst)
	if errors.Is(err, syscall.EXDEV) {
		err = copyFile(real, dst)
	}
	if err != nil {
		t.Fatalf("realnv: %v", err)
	}
}

// Copy copies the file src (symlinks followed) to dst: a file of its own, with its own inode, which
// the loader takes for another library than src (glibc tells loaded objects apart by device and inode).
func Copy(t testing.TB, src, dst string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(src)
	if err == nil {
		mkdirAbove(t, dst)
		err = copyFile(real, dst)
	}
	if err != nil {
		t.Fatalf("realnv: %v", err)
	}
}

func mkdirAbove(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatalf("realnv: %v", err)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Versioned is the file name behind the soname link in the package ("libcudart.so.12" ->
// "libcudart.so.12.4.127"), for layouts that install a file and its soname link the way Debian,
// conda and the toolkit do.
func (p Package) Versioned(t testing.TB, soname string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(p.Lib(soname))
	if err != nil {
		t.Fatalf("realnv: %v", err)
	}
	return filepath.Base(real)
}
