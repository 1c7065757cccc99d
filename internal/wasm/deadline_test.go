package wasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestModule_Call_deadline stops a search that loops forever (../../testdata/hostile/search-loop.wasm,
// built by host's hostileModules) by each thing that may end a call: the message says which.
func TestModule_Call_deadline(t *testing.T) {
	loop, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hostile", "search-loop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		timeout       time.Duration
		callerTimeout time.Duration // a deadline on the caller's context; 0 for none
		// end, when set, ends the call when it starts searching: through the caller's context, or
		// through the engine's clock (expireCall).
		end  func(cancelCaller context.CancelFunc, expireCall func())
		want string
	}{
		// Only the message is checked: how late a busy machine stops it is not this test's business.
		{name: "the call's timeout, on the real clock", timeout: 50 * time.Millisecond, want: "timed out while searching"},
		{name: "the call's timeout, on the engine's clock", timeout: time.Hour,
			end: func(_ context.CancelFunc, expireCall func()) { go expireCall() }, want: "timed out while searching"},
		{name: "the caller's deadline", timeout: time.Hour, callerTimeout: 50 * time.Millisecond, want: "timed out while searching"},
		{name: "the caller's cancel", timeout: time.Hour,
			end: func(cancelCaller context.CancelFunc, _ func()) { go cancelCaller() }, want: "canceled while searching"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine("")
			defer e.Close()
			caller, cancelCaller := context.WithCancel(ctx)
			defer cancelCaller()
			if tc.callerTimeout > 0 {
				caller, cancelCaller = context.WithTimeout(caller, tc.callerTimeout)
				defer cancelCaller()
			}
			var expireCall func()
			if tc.end != nil {
				e.AfterFunc = func(d time.Duration, expire func()) func() bool {
					if d != tc.timeout {
						t.Errorf("deadline started for %v; want the call's timeout, %v", d, tc.timeout)
					}
					expireCall = expire
					return func() bool { return false } // it never fires by itself
				}
				e.Entering = func(doing string) {
					if doing == "searching" {
						tc.end(cancelCaller, expireCall)
					}
				}
			}
			m, err := e.Load(ctx, loop, 1<<20, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = m.Call(caller, Grants{}, []byte("{}"), tc.timeout)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v; want %q", err, tc.want)
			}
		})
	}
}
