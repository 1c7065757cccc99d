package cachedir

import (
	"path/filepath"
	"strings"
	"testing"
)

// Test_layout: every name is in the directory it is asked of, no two entries share one, and with the
// cache off there is none.
func Test_layout(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	names := func(base string) []string {
		compiled, results := Compiled(base), Results(base)
		return []string{CatalogFile(base, hash), pinFile(base, "/p/site.wasm"), results, ResultFile(results, hash),
			compiled, ModuleDir(compiled, hash), SumFile(ModuleDir(compiled, hash)), RefusalFile(compiled, hash)}
	}
	for _, name := range names("") {
		if name != "" {
			t.Errorf("with the cache off: %q", name)
		}
	}
	base := t.TempDir()
	seen := map[string]bool{}
	for _, name := range names(base) {
		if rel, err := filepath.Rel(base, name); err != nil || strings.HasPrefix(rel, "..") || strings.HasPrefix(filepath.Base(name), tempPrefix) || seen[name] {
			t.Errorf("%q: outside %s, a temporary's name or given twice", name, base)
		}
		seen[name] = true
	}
}
