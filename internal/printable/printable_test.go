package printable

import "testing"

func TestString(t *testing.T) {
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
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if Is(tt.in) != (tt.in == tt.want) {
				t.Errorf("Is(%q) = %v", tt.in, Is(tt.in))
			}
		})
	}
}

func FuzzString(f *testing.F) {
	f.Add("a\nb\x1b[2J\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		p := String(s)
		if !Is(p) {
			t.Fatalf("String(%q) = %q, which still needs escaping", s, p)
		}
		if Is(s) && p != s {
			t.Fatalf("String changed %q, which needs no escaping, to %q", s, p)
		}
	})
}
