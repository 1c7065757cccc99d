package driver

import "testing"

func Test_decodeChildAnswer(t *testing.T) {
	tests := []struct {
		name string
		out  string
		ok   bool
		lib  string
	}{
		{name: "answer", out: `{"pathfinder_child":"pathfinder cuda-probe 1","library":"libcuda.so.1"}` + "\n", ok: true, lib: "libcuda.so.1"},
		{name: "library chatter first", out: "cuda: debug build\n" + `{"pathfinder_child":"pathfinder cuda-probe 1","library":"x"}`, ok: true, lib: "x"},
		// The program's own main ran instead of serving the child: its output is no answer.
		{name: "a program that ignored the child role", out: "usage: pathfinder [flags]\n", ok: false},
		{name: "wrong protocol version", out: `{"pathfinder_child":"pathfinder cuda-probe 0"}`, ok: false},
		{name: "truncated", out: `{"pathfinder_child":"pathfinder cuda-probe 1","lib`, ok: false},
		{name: "nothing", out: "", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, ok := decodeChildAnswer([]byte(tc.out))
			if ok != tc.ok || (ok && res.Library != tc.lib) {
				t.Fatalf("got %+v %v", res, ok)
			}
		})
	}
}
