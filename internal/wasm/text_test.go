package wasm

import "testing"

func TestPrintable(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "/usr/lib/libcudart.so.13 — ok, ünïcödé", "/usr/lib/libcudart.so.13 — ok, ünïcödé"},
		{"a newline forging a line", "a\n/opt/evil/libcudart.so.12", `a\n/opt/evil/libcudart.so.12`},
		{"carriage return and tab", "x\ry\tz", `x\ry\tz`},
		{"clear the screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"set the title, ring the bell", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"DEL and NUL", "\x7f\x00", `\x7f\x00`},
		{"C1 control: CSI", "\u009b2J", `\u009b2J`},
		{"bidi override and isolate", "\u202eabc\u2066", `\u202eabc\u2066`},
		{"not UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Printable(tt.in); got != tt.want {
				t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if Unprintable(tt.in) != (tt.in != tt.want) {
				t.Errorf("Unprintable(%q) = %v", tt.in, Unprintable(tt.in))
			}
		})
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("a\nb\x1b[2J\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		p := Printable(s)
		if Unprintable(p) {
			t.Fatalf("Printable(%q) = %q, which still needs escaping", s, p)
		}
		if !Unprintable(s) && p != s {
			t.Fatalf("Printable changed %q, which needs no escaping, to %q", s, p)
		}
	})
}
