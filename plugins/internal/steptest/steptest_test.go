package steptest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Test_checkSources: a step is compared only with the module built from the C its folder holds.
func Test_checkSources(t *testing.T) {
	const c = "//go:build ignore\nvoid search_mine(void) {}\n"
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	manifest := "# generated\n" + sum("sdk") + "  abi/c/sdk.c\n" + sum(c) + "  plugins/mine/mine.c\ncc clang\n" + sum("wasm") + "  builtin/steps.wasm\n"
	tests := []struct {
		name  string
		step  string
		files map[string]string
		want  string
	}{
		{"as built", "mine", map[string]string{"abi/c/sdk.c": "sdk", "plugins/mine/mine.c": c}, ""},
		{"the step's C changed", "mine", map[string]string{"abi/c/sdk.c": "sdk", "plugins/mine/mine.c": c + "// more\n"},
			"plugins/mine/mine.c changed after builtin/steps.wasm was built: run go generate ./builtin"},
		{"the SDK changed", "mine", map[string]string{"abi/c/sdk.c": "sdk 2", "plugins/mine/mine.c": c},
			"abi/c/sdk.c changed after"},
		{"a C file the module lacks", "mine", map[string]string{"abi/c/sdk.c": "sdk", "plugins/mine/mine.c": c, "plugins/mine/glob.c": c},
			"plugins/mine/glob.c is not in builtin/steps.wasm"},
		{"no C at all", "other", map[string]string{"abi/c/sdk.c": "sdk", "plugins/mine/mine.c": c, "plugins/other/other.go": "package other"},
			"plugins/other holds no C"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.files["builtin/steps.wasm.sum"] = manifest
			for p, data := range tt.files {
				os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
				os.WriteFile(filepath.Join(root, p), []byte(data), 0o644)
			}
			err := checkSources(root, tt.step)
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
