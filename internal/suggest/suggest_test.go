package suggest

import (
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
	known := []string{"already-loaded", "system", "wheels", "conda", "envroots", "canary", "programfiles"}
	tests := []struct {
		name, in string
		want     []string
	}{
		{"one letter dropped", "cnda", []string{"conda"}},
		{"another case", "Wheels", []string{"wheels"}},
		{"a beginning", "env", []string{"envroots"}},
		{"nothing close", "zzzzzz", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Closest(tt.in, known); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPhrase(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"conda"}, ` (did you mean "conda"?)`},
		{[]string{"a", "b", "c"}, ` (did you mean "a", "b" or "c"?)`},
	} {
		if got := Phrase(tt.in); got != tt.want {
			t.Errorf("Phrase(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	options := []string{"find", "load", "explain", "list", "plugin", "plugins", "config", "completion"}
	tests := []struct {
		name, s string
		want    []string
	}{
		{"one letter missing", "fnd", []string{"find"}},
		{"two letters swapped", "fidn", []string{"find"}},
		{"one letter wrong", "lost", []string{"list"}},
		{"a unique prefix", "expl", []string{"explain"}},
		{"a prefix of two", "plugi", []string{"plugin"}}, // plugin is one letter away, plugins two
		{"a prefix of two, far from both", "co", nil},
		{"two off in a long word", "complteion", []string{"completion"}},
		{"two off in a short word", "fxnx", nil},
		{"a tie", "lod", []string{"load"}},
		{"nothing near", "resolve", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Nearest(tt.s, options)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("Nearest(%q) = %q, want %q", tt.s, got, tt.want)
			}
		})
	}
	if got := Nearest("lis", []string{"lisp", "list"}); len(got) != 2 {
		t.Fatalf("a tie gives both: %q", got)
	}
}
