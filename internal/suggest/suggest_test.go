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
