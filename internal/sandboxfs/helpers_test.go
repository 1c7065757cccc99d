package sandboxfs

import (
	"os"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// recorded is the file system a step granted dir sees, over dir opened as a root, recording what it
// looks at and logging through log (nil for none); the root is closed when the test ends.
func recorded(t *testing.T, dir string, log func(string)) (*os.Root, *RootFS, *observe.Recorder) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	rfs := NewRootFS(root, dir)
	rec := &observe.Recorder{}
	rfs.Record(rec, log)
	return root, rfs, rec
}
