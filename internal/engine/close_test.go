package engine

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// closeEnv is a machine with cudart under CUDA_PATH and a cache of its own, for Finders with engines
// of their own: closing one closes its plugin runtime, as in a program.
func closeEnv(t *testing.T) (testEnv, string) {
	t.Helper()
	cuda := t.TempDir()
	lib := filetree.Put(t, cuda, "lib64/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	return testEnv{"CUDA_PATH": cuda, "PATHFINDER_CACHE_DIR": t.TempDir(), "PATHFINDER_TEST_OWN_ENGINE": "1"}, lib
}

// wantClosed fails unless err says the Engine was closed, and says nothing about the library.
func wantClosed(t *testing.T, what string, err error) {
	t.Helper()
	var se *SearchError
	if !errors.Is(err, ErrClosed) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrRefused) || !errors.As(err, &se) || se.Code() != "closed" {
		t.Errorf("%s: %v, want an error that errors.Is ErrClosed, with the code \"closed\"", what, err)
	}
}

// wantFoundAfter checks that nothing a closed Engine's call saw was remembered: a fresh Engine on the
// same cache finds the library, from the cache or afresh.
func wantFoundAfter(t *testing.T, env testEnv, lib string) {
	t.Helper()
	for i := range 2 { // the second is answered from what the first left in the cache
		got, err := newFinder(t, env, "").Find(bg, "cudart")
		if err != nil || got.Path != lib {
			t.Fatalf("a fresh Engine after the closed one, find %d: %+v, %v; want %s", i+1, got, err, lib)
		}
	}
}

// TestFinder_Close_duringAndAfter closes an Engine before, during (before each step of the search)
// and after a call: every call that has not returned when Close begins, and every call after it,
// fails with ErrClosed — never not-found or refused — and none of them leaves an answer behind.
func TestFinder_Close_duringAndAfter(t *testing.T) {
	tests := []struct {
		name    string
		closeAt string // the step before which Close runs; "" closes before the call
		warm    bool   // a first call found it before Close: what is remembered is not served either
	}{
		{name: "before the call"},
		{name: "after a call that found it", warm: true},
		{name: "before the wheels step", closeAt: "wheels"},
		{name: "before the system step", closeAt: "system"},
		{name: "before the envroots step, which finds it", closeAt: "envroots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, lib := closeEnv(t)
			for _, call := range []string{"Find", "Explain", "FindTogether", "Load"} {
				var f *Engine
				var armed atomic.Bool // after the warm-up: the call below is the one Close meets
				f = newFinder(t, env, "", func(o *Options) {
					o.hooks.beforeStep = func(step string) {
						if armed.Load() && step == tt.closeAt {
							f.Close()
						}
					}
				})
				if tt.warm {
					if got, err := f.Find(bg, "cudart"); err != nil || got.Path != lib {
						t.Fatalf("before Close: %+v, %v", got, err)
					}
				}
				if tt.closeAt == "" {
					f.Close()
				}
				armed.Store(true)
				var err error
				switch call {
				case "Find":
					_, err = f.Find(bg, "cudart")
				case "Explain":
					ex := f.Explain(bg, DynamicLib, "cudart")
					if ex.Result != nil {
						t.Errorf("Explain: a result from a closed Engine: %+v", ex.Result)
					}
					err = ex.Err
				case "FindTogether":
					_, err = f.FindTogether(bg, []string{"cudart"})
				case "Load":
					_, err = f.Load(bg, "nvjpeg") // nowhere: a load that runs every step
				}
				wantClosed(t, call, err)
				f.Close() // twice is fine
			}
			wantFoundAfter(t, env, lib)
		})
	}
}

// TestFinder_Close_concurrent closes Finders while a search of theirs runs, from another goroutine,
// at each step: the call either returned before Close began (and found the library) or says the
// Engine was closed. Run under -race, it also shows that Close races with nothing.
func TestFinder_Close_concurrent(t *testing.T) {
	env, lib := closeEnv(t)
	rounds := 8
	if testing.Short() {
		rounds = 2
	}
	for range rounds {
		for _, step := range []string{"wheels", "system", "envroots"} {
			reached := make(chan struct{})
			var once sync.Once
			f := newFinder(t, env, "", func(o *Options) {
				o.hooks.beforeStep = func(s string) {
					if s == step {
						once.Do(func() { close(reached) })
					}
				}
			})
			errs := make(chan error, 2)
			go func() { _, err := f.Find(bg, "cudart"); errs <- err }()
			go func() { errs <- f.Explain(bg, DynamicLib, "cudart").Err }()
			<-reached
			f.Close()
			for range 2 {
				if err := <-errs; err != nil {
					wantClosed(t, "closed at "+step, err)
				}
			}
			// The last call out released what the calls had opened.
			f.mu.Lock()
			roots, modules := len(f.roots), len(f.modules)
			f.mu.Unlock()
			if roots != 0 || modules != 0 {
				t.Errorf("closed at %s, every call returned: %d directories and %d modules still held", step, roots, modules)
			}
		}
	}
	wantFoundAfter(t, env, lib)
	if lib2, err := newFinder(t, env, "").Find(bg, "cudart"); err != nil || lib2.Path != lib {
		t.Fatalf("%+v %v", lib2, err)
	}
}
