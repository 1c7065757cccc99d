package loadermodel

import (
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// BenchmarkLoadProblem_realCublas: the prediction for NVIDIA's libcublas (eight DT_NEEDED entries),
// what an uncached find of it adds.
func BenchmarkLoadProblem_realCublas(b *testing.B) {
	p := realnv.Get(b, "trixie/libcublas12").Path("usr/lib/x86_64-linux-gnu/libcublas.so.12")
	f, n := openNeeds(b, p)
	defer f.Close()
	l := &Loader{Getenv: env(nil)}
	for b.Loop() {
		if got := l.LoadProblem(p, n, func(s string) bool { return s == "libcublasLt.so.12" }, nil); got != "" {
			b.Fatal(got)
		}
	}
}
