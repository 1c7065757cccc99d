package bounded

import (
	"io"
	"strings"
	"testing"
)

func TestBuffer_Write(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"under the limit", 8, []string{"abc", "de"}, "abcde"},
		{"a write across the limit", 4, []string{"abc", "def"}, "abcd"},
		{"writes after the limit", 3, []string{"abc", "def", "g"}, "abc"},
		{"no limit keeps nothing", 0, []string{"abc"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Buffer{Limit: tc.limit}
			for _, w := range tc.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v: a bounded write reports it all written", w, n, err)
				}
			}
			if got := b.String(); got != tc.want || string(b.Bytes()) != tc.want {
				t.Errorf("kept %q, want %q", got, tc.want)
			}
		})
	}
}

// io.Copy prefers a ReaderFrom: the limit must hold through it too.
func TestBuffer_copy(t *testing.T) {
	b := &Buffer{Limit: 5}
	if _, err := io.Copy(b, strings.NewReader(strings.Repeat("x", 1<<20))); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "xxxxx" {
		t.Errorf("kept %d bytes, want 5", len(got))
	}
	b.Reset()
	if b.String() != "" || b.Limit != 5 {
		t.Errorf("after Reset: %q, limit %d", b.String(), b.Limit)
	}
}
