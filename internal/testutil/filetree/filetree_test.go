package filetree

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	root := t.TempDir()
	Write(t, root, map[string]string{
		"/sys/module/nvidia/version": "550.54.14\n",
		"sys/module/nvidia_uvm":      "dir",
		"lib/libx.so.1":              "-> libx.so.1.2",
	})
	if b, err := os.ReadFile(filepath.Join(root, "sys/module/nvidia/version")); err != nil || string(b) != "550.54.14\n" {
		t.Errorf("file: %q, %v", b, err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "sys/module/nvidia_uvm")); err != nil || !fi.IsDir() {
		t.Errorf("dir: %v, %v", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(root, "lib/libx.so.1")); err != nil || target != "libx.so.1.2" {
		t.Errorf("link: %q, %v", target, err)
	}
}

func TestNew(t *testing.T) {
	root := New(t, map[string]string{"etc/os-release": "ID=debian\n"})
	if b, err := os.ReadFile(filepath.Join(root, "etc/os-release")); err != nil || string(b) != "ID=debian\n" {
		t.Errorf("New: %q, %v", b, err)
	}
}
