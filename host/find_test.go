package host

import (
	"testing"
)

func TestFind_wheels(t *testing.T) {
	site := t.TempDir()
	want := put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site}, "")
	ex := f.Explain(bg, "cudart")
	for _, st := range ex.Steps {
		t.Logf("%+v", st)
	}
	lib, err := f.Find(bg, "cudart")
	if err != nil {
		t.Fatal(err)
	}
	if lib.Path != want || lib.FoundVia != "site-packages" || lib.Step != "wheels" {
		t.Fatalf("got %+v", lib)
	}
}
