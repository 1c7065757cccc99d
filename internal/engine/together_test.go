package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestFindTogether(t *testing.T) {
	site := t.TempDir()
	cuda := t.TempDir()
	filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	filetree.Put(t, site, "nvidia/cu13/lib/libnvrtc.so.13", elfLib(t, "libnvrtc.so.13"))
	for _, so := range []string{"libcudart.so.12", "libnvrtc.so.12", "libcurand.so.10"} {
		filetree.Put(t, cuda, "lib64/"+so, elfLib(t, so))
	}
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "CUDA_HOME": cuda}, "")

	// One by one, cudart comes from the wheel and curand from CUDA_HOME: two toolkits. (No test loads
	// these: what a test process loaded would be found as already loaded.)
	one, _ := f.Find(bg, "cudart")
	two, _ := f.Find(bg, "curand")
	if !strings.HasPrefix(one.Path, site) || !strings.HasPrefix(two.Path, cuda) {
		t.Fatalf("setup: %s, %s", one.Path, two.Path)
	}
	// An Engine of its own: f's cudart 13 anchors it to CUDA 13, which curand's root has none of.
	f = newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "CUDA_HOME": cuda}, "")
	libs, err := f.FindTogether(bg, []string{"cudart", "nvrtc", "curand"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if !strings.HasPrefix(l.Path, cuda+"/lib64/") || l.FoundVia != "CUDA_HOME" || l.Step != "envroots" {
			t.Fatalf("%s from %s via %s step %s, want all from CUDA_HOME", l.Name, l.Path, l.FoundVia, l.Step)
		}
	}
	// The wheel root is preferred when it has everything.
	libs, err = f.FindTogether(bg, []string{"cudart", "nvrtc"})
	if err != nil || !strings.HasPrefix(libs[0].Path, site) || !strings.HasPrefix(libs[1].Path, site) {
		t.Fatalf("got %v, %v; want both from the wheel", libs, err)
	}

	other := t.TempDir()
	filetree.Put(t, other, "lib64/libcurand.so.10", elfLib(t, "libcurand.so.10"))
	g := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "CUDA_HOME": other}, "")
	_, err = g.FindTogether(bg, []string{"cudart", "curand"})
	var me *MixedToolkitsError
	if !errors.Is(err, ErrMixedToolkits) || !errors.As(err, &me) {
		t.Fatalf("err %v, want a MixedToolkitsError", err)
	}
	if !strings.Contains(err.Error(), site+` lacks "curand"`) || !strings.Contains(err.Error(), other+` lacks "cudart"`) {
		t.Fatalf("message: %v", err)
	}
	// A root that lacks the first name is said to lack only that: it holds the second.
	third := t.TempDir()
	filetree.Put(t, third, "lib64/libnvrtc.so.12", elfLib(t, "libnvrtc.so.12"))
	hsite := t.TempDir()
	filetree.Put(t, hsite, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	h := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": hsite, "CUDA_HOME": third}, "")
	_, err = h.FindTogether(bg, []string{"cudart", "nvrtc"})
	if !errors.As(err, &me) || !reflect.DeepEqual(me.Missing, map[string][]string{hsite: {"nvrtc"}, third: {"cudart"}}) {
		t.Fatalf("err %v; want %s lacking only nvrtc and %s lacking only cudart", err, hsite, third)
	}
	if _, err := g.FindTogether(bg, []string{"cudart", "nvjpeg"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a library found nowhere: %v", err)
	}
}
