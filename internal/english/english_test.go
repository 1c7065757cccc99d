package english

import "testing"

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		want string
	}{
		{"none", 0, "0 GPUs"},
		{"one", 1, "1 GPU"},
		{"two", 2, "2 GPUs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Plural(tc.n, "GPU"); got != tc.want {
				t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}
