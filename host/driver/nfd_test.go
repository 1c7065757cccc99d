package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nfdRead reads a features.d folder at time now as nfd-worker's local source does
// (node-feature-discovery v0.19.0, source/local/local.go: getFeaturesFromFiles skips names beginning
// with a dot, getFileContent files over MaxFeatureFileSize, parseFeatureFile trims each line, takes
// "# +" lines as directives and drops the labels after an expiry-time that has passed, and splits
// name=value at the first '=').
func nfdRead(t *testing.T, dir string, now time.Time) map[string]string {
	t.Helper()
	labels := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if strings.HasPrefix(e.Name(), ".") || err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxFeatureFileSize {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		expiry := now
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, "# +expiry-time="); ok {
				if expiry, err = time.Parse(time.RFC3339, strings.TrimSpace(v)); err != nil {
					t.Fatalf("%s: %q: %v", e.Name(), line, err)
				}
			}
			if line == "" || strings.HasPrefix(line, "#") || expiry.Before(now) {
				continue
			}
			k, v, found := strings.Cut(line, "=")
			if !found {
				v = "true"
			}
			labels[k] = v
		}
	}
	return labels
}

// TestNodeLabels_FeatureFile holds the written file to NFD's rules: what NFD reads back is the label
// set, until the expiry time, and nothing after it; a file NFD would ignore for its size is refused.
func TestNodeLabels_FeatureFile(t *testing.T) {
	l := (&Report{State: StateNoDevices, Setup: SetupContainerNoGPU, DriverVersion: "550.144.03", MaxCUDA: "12.4"}).NodeLabels()
	expires := time.Date(2026, 12, 1, 10, 4, 0, 0, time.FixedZone("CET", 3600))
	data, err := l.FeatureFile(expires)
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(data), "\n"); first != "# +expiry-time=2026-12-01T09:04:00Z" {
		t.Fatalf("first line %q", first)
	}
	dir := t.TempDir()
	if err := WriteFeatureFile(dir, data); err != nil {
		t.Fatal(err)
	}
	if got := nfdRead(t, dir, expires.Add(-time.Second)); fmt.Sprint(got) != fmt.Sprint(l.Labels) || len(got) != 13 {
		t.Fatalf("NFD reads %v before the expiry, want %v", got, l.Labels)
	}
	if got := nfdRead(t, dir, expires.Add(time.Second)); len(got) != 0 {
		t.Fatalf("NFD reads %v after the expiry", got)
	}
	if data, _ := l.FeatureFile(time.Time{}); bytes.Contains(data, []byte("#")) {
		t.Fatalf("without an expiry: %q", data)
	}

	big := NodeLabels{Labels: map[string]string{}}
	for i := 0; len(big.Labels)*(len("nvidia.com/x.0000=")+63+1) <= MaxFeatureFileSize; i++ {
		big.Labels[fmt.Sprintf("nvidia.com/x.%04d", i)] = strings.Repeat("v", 63)
	}
	if _, err := big.FeatureFile(time.Time{}); err == nil || !strings.Contains(err.Error(), "NFD reads at most 65536") {
		t.Fatalf("a file over 64 KiB: %v", err)
	}
}

func TestWriteFeatureFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, NFDFileName)
	if err := os.WriteFile(path, []byte("stale=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFeatureFile(dir, []byte("nvidia.com/gpu.count=1\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "nvidia.com/gpu.count=1\n" {
		t.Fatalf("file %q, %v", got, err)
	}
	// NFD reads every file not named with a dot: the temporary one is gone, the file is not hidden.
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || strings.HasPrefix(NFDFileName, ".") {
		t.Fatalf("left behind: %v", entries)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := WriteFeatureFile(filepath.Join(dir, "missing"), nil); err == nil || !strings.HasPrefix(err.Error(), "writing the feature file: ") {
		t.Fatalf("error %v", err)
	}
}

// TestNodeLabels_NodeFeature holds the object to NFD's NodeFeature (node-feature-discovery v0.19.0,
// api/nfd/v1alpha1: group nfd.k8s-sigs.io, version v1alpha1, the node-name label) under the name
// GFD gives its own (k8s-device-plugin v0.20.0, internal/lm/output.go).
func TestNodeLabels_NodeFeature(t *testing.T) {
	l := NodeLabels{Labels: map[string]string{"nvidia.com/gpu.count": "2", "nvidia.com/cuda.driver-version.revision": ""}}
	o, err := l.NodeFeature("gpu-node-1.example.com")
	if err != nil {
		t.Fatal(err)
	}
	var y bytes.Buffer
	if err := o.WriteYAML(&y); err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeature
metadata:
  name: nvidia-features-for-gpu-node-1.example.com
  labels:
    nfd.node.kubernetes.io/node-name: "gpu-node-1.example.com"
spec:
  labels:
    nvidia.com/cuda.driver-version.revision: ""
    nvidia.com/gpu.count: "2"
`
	if y.String() != want {
		t.Fatalf("YAML\n%s\nwant\n%s", y.String(), want)
	}
	j, _ := json.Marshal(o)
	if string(j) != `{"apiVersion":"nfd.k8s-sigs.io/v1alpha1","kind":"NodeFeature","metadata":{"name":"nvidia-features-for-gpu-node-1.example.com","labels":{"nfd.node.kubernetes.io/node-name":"gpu-node-1.example.com"}},"spec":{"labels":{"nvidia.com/cuda.driver-version.revision":"","nvidia.com/gpu.count":"2"}}}` {
		t.Fatalf("JSON %s", j)
	}
	// No labels: an object that clears what an earlier one asked for.
	o, _ = NodeLabels{}.NodeFeature("n")
	y.Reset()
	o.WriteYAML(&y)
	if !strings.HasSuffix(y.String(), "spec:\n  labels: {}\n") {
		t.Fatalf("YAML without labels:\n%s", y.String())
	}
	for _, node := range []string{"", "Upper", "a_b", strings.Repeat("n", 64)} {
		if _, err := l.NodeFeature(node); err == nil {
			t.Errorf("node %q accepted", node)
		}
	}
}
