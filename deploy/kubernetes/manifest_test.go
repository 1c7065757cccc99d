package kubernetes

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// featuresD is where NFD's worker reads feature files (node-feature-discovery v0.19.0,
// source/local/local.go, featureFilesDir).
const featuresD = "/etc/kubernetes/node-feature-discovery/features.d"

// decodeStrict decodes a YAML manifest into a Kubernetes type as strictly as the API server:
// sigs.k8s.io/yaml's UnmarshalStrict refuses unknown and duplicate fields but, as encoding/json,
// matches names in any case, so the JSON is decoded again with sigs.k8s.io/json's strict, case-sensitive
// decoder, the one k8s.io/apimachinery's serializers use.
func decodeStrict(data []byte, v any) error {
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		return err
	}
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	return err
}

// daemonSet decodes daemonset.yaml strictly into Kubernetes' own type.
func daemonSet(t *testing.T) *appsv1.DaemonSet {
	t.Helper()
	data, err := os.ReadFile("daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := decodeStrict(data, &ds); err != nil {
		t.Fatalf("daemonset.yaml: %v", err)
	}
	return &ds
}

func TestDaemonSet_strict(t *testing.T) {
	ds := daemonSet(t)
	if ds.APIVersion != "apps/v1" || ds.Kind != "DaemonSet" || len(ds.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s %s with %d containers", ds.APIVersion, ds.Kind, len(ds.Spec.Template.Spec.Containers))
	}
	// The decode is strict: a field misspelt, in its case only or not, fails it.
	data, _ := os.ReadFile("daemonset.yaml")
	for _, wrong := range []string{"readOnlyRootFileSystem", "readOnlyRootFS"} {
		var bad appsv1.DaemonSet
		if err := decodeStrict(bytes.Replace(data, []byte("readOnlyRootFilesystem"), []byte(wrong), 1), &bad); err == nil {
			t.Errorf("%s decoded", wrong)
		}
	}
}

// TestDaemonSet: where it runs, what it mounts, and that it runs unprivileged, without NVML or the
// NVIDIA runtime hook.
func TestDaemonSet(t *testing.T) {
	ds := daemonSet(t)
	pod := ds.Spec.Template.Spec
	c := pod.Containers[0]
	if ds.Namespace != "node-feature-discovery" { // NFD v0.19.0's deployment/overlays/default/kustomization.yaml
		t.Errorf("namespace %q", ds.Namespace)
	}
	if !selectorMatches(ds.Spec.Selector, ds.Spec.Template.Labels) {
		t.Errorf("selector %v does not select the pods' labels %v", ds.Spec.Selector, ds.Spec.Template.Labels)
	}
	var keys []string
	for _, term := range pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Operator != corev1.NodeSelectorOpIn || !slices.Equal(e.Values, []string{"true"}) {
				t.Errorf("%s: %s %v", e.Key, e.Operator, e.Values)
			}
			keys = append(keys, e.Key)
		}
	}
	// NFD's PCI labels of NVIDIA's vendor id: with the vendor alone, or with NFD's default label
	// fields, class and vendor, of a 3D or a VGA controller (NFD v0.19.0,
	// docs/reference/worker-configuration-reference.md, sources.pci.deviceLabelFields).
	if want := []string{"feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-0302_10de.present", "feature.node.kubernetes.io/pci-0300_10de.present"}; !slices.Equal(keys, want) {
		t.Errorf("node affinity on %q, want each of %q", keys, want)
	}

	sc := c.SecurityContext
	if sc == nil || sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("security context %+v", sc)
	}
	if pod.HostPID || pod.HostNetwork || pod.HostIPC || pod.RuntimeClassName != nil || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("pod %+v", pod)
	}
	// No NVML and no runtime hook: no GPU asked for, none of the variables the NVIDIA Container
	// Toolkit acts on, nothing of the driver's user space mounted.
	for name := range c.Resources.Limits {
		if strings.HasPrefix(string(name), "nvidia.com/") {
			t.Errorf("asks for %s", name)
		}
	}
	if len(c.Env) > 0 || len(c.EnvFrom) > 0 {
		t.Errorf("environment %v %v", c.Env, c.EnvFrom)
	}

	hostPaths := map[string]string{}
	for _, v := range pod.Volumes {
		if v.HostPath == nil {
			t.Fatalf("volume %s is no hostPath", v.Name)
		}
		hostPaths[v.Name] = v.HostPath.Path
		if !strings.HasPrefix(v.HostPath.Path, "/sys/") && v.HostPath.Path != "/proc/driver/nvidia" && v.HostPath.Path != featuresD {
			t.Errorf("mounts the host's %s", v.HostPath.Path)
		}
	}
	for _, m := range c.VolumeMounts {
		host := hostPaths[m.Name]
		switch {
		case host == featuresD:
			if m.MountPath != featuresD || m.ReadOnly {
				t.Errorf("features.d at %s, read-only %v", m.MountPath, m.ReadOnly)
			}
		case !m.ReadOnly || m.MountPath != "/host"+host:
			t.Errorf("the host's %s at %s, read-only %v; want read-only at /host%s", host, m.MountPath, m.ReadOnly, host)
		}
	}
	args := strings.Join(c.Args, " ")
	if !strings.HasPrefix(args, "driver --format nfd --root /host --output "+featuresD+" --interval ") {
		t.Errorf("args %q", args)
	}
}

func selectorMatches(sel *metav1.LabelSelector, labels map[string]string) bool {
	if sel == nil || len(sel.MatchLabels) == 0 {
		return false
	}
	for k, v := range sel.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestDocs: README's Kubernetes section and docs/kubernetes.md say what the manifest and the
// Containerfile do: the two commands, the namespace, the arguments, the image and how it is built,
// what is mounted.
func TestDocs(t *testing.T) {
	ds := daemonSet(t)
	c := ds.Spec.Template.Spec.Containers[0]
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Kubernetes\n")
	section, _, _ = strings.Cut(section, "\n## ")
	containerfile, _ := os.ReadFile("Containerfile")
	build := regexp.MustCompile(`podman build [^\n]*`).Find(containerfile)
	docs, _ := os.ReadFile("../../docs/kubernetes.md")
	flat := func(s string) string { return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ") }
	args := strings.Join(c.Args, " ")
	for doc, wants := range map[string][]string{
		flat(section): {
			// NFD's own install command (node-feature-discovery v0.19.0, docs/get-started/quick-start.md),
			// of the release whose rules the tests hold the labels to.
			`kubectl apply -k "https://github.com/kubernetes-sigs/node-feature-discovery/deployment/overlays/default?ref=v0.19.0"`,
			"kubectl apply -f deploy/kubernetes/daemonset.yaml",
			"in its namespace, " + ds.Namespace,
			"as pathfinder driver --format nfd --interval 60s: once a minute",
			"with an expiry four minutes on",
			"The manifest runs the image " + c.Image,
			string(build) + " builds it",
			"it drops every capability, has a read-only root file system, reads the host's /sys and /proc/driver/nvidia read-only and writes only into features.d",
		},
		flat(string(docs)): {"runs pathfinder " + args + " in NFD's namespace"},
	} {
		for _, want := range wants {
			if !strings.Contains(doc, want) {
				t.Errorf("the documents lack %q", want)
			}
		}
	}
	if !strings.Contains(args, "--interval 60s") {
		t.Errorf("args %q: the documents say once a minute", args)
	}
	for _, v := range ds.Spec.Template.Spec.Volumes {
		if !strings.Contains(string(docs), "`"+v.HostPath.Path+"`") && v.HostPath.Path != featuresD {
			t.Errorf("docs/kubernetes.md does not say it mounts %s", v.HostPath.Path)
		}
	}
}
