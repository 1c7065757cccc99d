package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// NFDFileName is the file WriteFeatureFile writes in node-feature-discovery's features.d folder.
const NFDFileName = "pathfinder"

// MaxFeatureFileSize is the largest feature file NFD reads; it ignores a larger one whole
// (node-feature-discovery v0.19.0, source/local/local.go, MaxFeatureFileSize).
const MaxFeatureFileSize = 65536

// FeatureFile returns the labels as a node-feature-discovery feature file: a "# +expiry-time="
// directive first when expires is not zero (RFC 3339; NFD ignores the lines after it once that time
// has passed), then one name=value line a label, sorted by name. The format is NFD's local source's
// (node-feature-discovery v0.19.0, docs/usage/customization-guide.md, "Feature files" and "Input
// format"). It refuses a file over MaxFeatureFileSize, which NFD would not read.
func (l NodeLabels) FeatureFile(expires time.Time) ([]byte, error) {
	var b bytes.Buffer
	if !expires.IsZero() {
		fmt.Fprintf(&b, "# +expiry-time=%s\n", expires.UTC().Format(time.RFC3339))
	}
	for _, name := range slices.Sorted(maps.Keys(l.Labels)) {
		fmt.Fprintf(&b, "%s=%s\n", name, l.Labels[name])
	}
	if b.Len() > MaxFeatureFileSize {
		return nil, fmt.Errorf("the feature file would be %d bytes; NFD reads at most %d", b.Len(), MaxFeatureFileSize)
	}
	return b.Bytes(), nil
}

// WriteFeatureFile writes content as the feature file NFDFileName in dir (node-feature-discovery
// reads /etc/kubernetes/node-feature-discovery/features.d). It writes a temporary file in a hidden
// subfolder, which NFD does not read (it skips names that begin with a dot), and renames it into
// place, so NFD never sees half a file.
func WriteFeatureFile(dir string, content []byte) error {
	tmpDir, err := os.MkdirTemp(dir, ".pathfinder-tmp-")
	if err != nil {
		return fmt.Errorf("writing the feature file: %w", err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, NFDFileName)
	if err := writeSynced(tmp, content); err != nil {
		return fmt.Errorf("writing the feature file: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, NFDFileName)); err != nil {
		return fmt.Errorf("writing the feature file: %w", err)
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// NodeFeature is node-feature-discovery's NodeFeature object, the API GPU Feature Discovery publishes
// through by default: nfd-master gives the node that its nfd.node.kubernetes.io/node-name label names
// the labels in Spec.Labels. Its fields are NFD's (api/nfd/v1alpha1/types.go and
// annotations_labels.go, v0.19.0); its name is the one GFD gives its own (k8s-device-plugin v0.20.0,
// internal/lm/output.go), so it takes the place of GFD's object rather than adding to it.
type NodeFeature struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Labels map[string]string `json:"labels"`
	} `json:"spec"`
}

const nodeNameLabel = "nfd.node.kubernetes.io/node-name"

// NodeFeature returns the labels as the NodeFeature object for node, a Kubernetes node name.
func (l NodeLabels) NodeFeature(node string) (NodeFeature, error) {
	var o NodeFeature
	name := "nvidia-features-for-" + node
	if len(name) > labelPrefixMaxLength || !labelPrefix().MatchString(name) {
		return o, fmt.Errorf("node %q: nvidia-features-for-%s is no object name (a DNS subdomain of at most 253 characters)", node, node)
	}
	if why := labelProblem(nodeNameLabel, node); why != "" {
		return o, fmt.Errorf("node %q: not a value of the %s label: %s", node, nodeNameLabel, why)
	}
	o.APIVersion, o.Kind = "nfd.k8s-sigs.io/v1alpha1", "NodeFeature"
	o.Metadata.Name = name
	o.Metadata.Labels = map[string]string{nodeNameLabel: node}
	o.Spec.Labels = l.Labels
	if o.Spec.Labels == nil {
		o.Spec.Labels = map[string]string{} // "labels": {}, which clears what an earlier object asked for
	}
	return o, nil
}

// WriteYAML writes the object as YAML, its keys sorted.
func (o NodeFeature) WriteYAML(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  labels:", o.APIVersion, o.Kind, o.Metadata.Name)
	writeYAMLMap(&b, o.Metadata.Labels)
	b.WriteString("spec:\n  labels:")
	writeYAMLMap(&b, o.Spec.Labels)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeYAMLMap writes a map of labels four spaces in, after its key. Every key and value passed
// labelProblem, so each is a plain YAML key and, quoted as JSON quotes it, a YAML string.
func writeYAMLMap(b *strings.Builder, m map[string]string) {
	if len(m) == 0 {
		b.WriteString(" {}\n")
		return
	}
	b.WriteString("\n")
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, _ := json.Marshal(m[k])
		fmt.Fprintf(b, "    %s: %s\n", k, v)
	}
}
