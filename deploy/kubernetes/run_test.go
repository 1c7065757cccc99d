package kubernetes

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// stage is one stage of the Containerfile: its FROM image and the instructions after it.
type stage struct {
	from  string
	lines []string
}

func containerfile(t *testing.T) []stage {
	t.Helper()
	data, err := os.ReadFile("Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "FROM "):
			stages = append(stages, stage{from: strings.TrimPrefix(line, "FROM ")})
		case line != "" && !strings.HasPrefix(line, "#") && len(stages) > 0:
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, line)
		}
	}
	return stages
}

var build struct {
	once sync.Once
	dir  string
	err  error
}

// pathfinder builds pathfinder with the Containerfile's own RUN line, in the repository's root where
// its COPY puts the source, and returns the binary.
func pathfinder(t *testing.T) string {
	t.Helper()
	stages := containerfile(t)
	build.once.Do(func() {
		var run string
		for _, l := range stages[0].lines {
			if s, ok := strings.CutPrefix(l, "RUN "); ok {
				run = s
			}
		}
		build.dir, build.err = os.MkdirTemp("", "pathfinder-image-")
		words := strings.Fields(run)
		var env []string
		for len(words) > 0 && strings.Contains(words[0], "=") {
			env, words = append(env, words[0]), words[1:]
		}
		for i, w := range words {
			if w == "-o" && i+1 < len(words) {
				words[i+1] = filepath.Join(build.dir, filepath.Base(words[i+1]))
			}
		}
		cmd := exec.Command(words[0], words[1:]...)
		cmd.Dir, cmd.Env = "../..", append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("%s: %v\n%s", run, err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return filepath.Join(build.dir, "pathfinder")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// TestContainerfile: the image is the static build and nothing else, tagged as the manifest's image.
func TestContainerfile(t *testing.T) {
	stages := containerfile(t)
	if len(stages) != 2 || stages[1].from != "scratch" ||
		strings.Join(stages[1].lines, "\n") != "COPY --from=build /pathfinder /pathfinder\nENTRYPOINT [\"/pathfinder\"]" {
		t.Fatalf("stages %+v", stages)
	}
	if !strings.Contains(strings.Join(stages[0].lines, "\n"), "RUN CGO_ENABLED=0 go build -tags pathfinder_static -o /pathfinder ./cmd/pathfinder") {
		t.Errorf("the build stage does not build the static pathfinder: %q", stages[0].lines)
	}
	f, err := elf.Open(pathfinder(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary asks for a dynamic loader, which scratch has not")
		}
	}
	if len(libs) > 0 {
		t.Errorf("the binary needs %v", libs)
	}
	data, _ := os.ReadFile("Containerfile")
	tag := regexp.MustCompile(`podman build -f deploy/kubernetes/Containerfile -t (\S+) \.`).FindSubmatch(data)
	if image := daemonSet(t).Spec.Template.Spec.Containers[0].Image; tag == nil || string(tag[1]) != image {
		t.Errorf("the Containerfile's build line tags %q, the manifest runs %q", tag, image)
	}
}

// fakeHost lays a GPU node's files under a temporary folder: keys are absolute paths, a value
// "link:TARGET" makes a symlink, "dir" a folder, anything else a file with that content. Like the
// kernel's sysfs, the PCI devices and the DMI folder are links into /sys/devices.
func fakeHost(t *testing.T, model, product string) string {
	t.Helper()
	dev := "/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0"
	files := map[string]string{
		dev + "/vendor": "0x10de\n", dev + "/class": "0x030200\n", dev + "/device": "0x2330\n",
		dev + "/driver":                                     "link:../../../../bus/pci/drivers/nvidia",
		"/sys/bus/pci/drivers/nvidia":                       "dir",
		"/sys/bus/pci/devices/0000:18:00.0":                 "link:../../.." + strings.TrimPrefix(dev, "/sys"),
		"/sys/module/nvidia/version":                        "550.144.03\n",
		"/sys/devices/virtual/dmi/id/product_name":          product + "\n",
		"/sys/class/dmi/id":                                 "link:../../devices/virtual/dmi/id",
		"/proc/driver/nvidia/version":                       "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Nov 28 00:00:00 UTC 2024\n",
		"/proc/driver/nvidia/gpus/0000:18:00.0/information": "Model: \t\t " + model + "\nBus Location: \t 0000:18:00.0\nDevice Minor: \t 0\n",
		featuresD: "dir",
	}
	host := t.TempDir()
	for path, content := range files {
		full := filepath.Join(host, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch target, isLink := strings.CutPrefix(content, "link:"); {
		case content == "dir":
			err = os.MkdirAll(full, 0o755)
		case isLink:
			err = os.Symlink(target, full)
		default:
			err = os.WriteFile(full, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return host
}

// containerView lays out what the DaemonSet's container sees of host: each read-only mount a copy
// of the host's folder (its links kept, so a link that leads out of what is mounted leads nowhere),
// each writable one the host's folder itself.
func containerView(t *testing.T, host string) string {
	t.Helper()
	pod := daemonSet(t).Spec.Template.Spec
	view := t.TempDir()
	for _, m := range pod.Containers[0].VolumeMounts {
		var hostPath string
		for _, v := range pod.Volumes {
			if v.Name == m.Name {
				hostPath = v.HostPath.Path
			}
		}
		at := filepath.Join(view, m.MountPath)
		os.MkdirAll(filepath.Dir(at), 0o755)
		var err error
		if m.ReadOnly {
			err = exec.Command("cp", "-a", filepath.Join(host, hostPath), at).Run()
		} else {
			err = os.Symlink(filepath.Join(host, hostPath), at)
		}
		if err != nil {
			t.Fatalf("mounting %s at %s: %v", hostPath, m.MountPath, err)
		}
	}
	return view
}

// containerArgs are the container's arguments with its absolute paths inside view.
func containerArgs(t *testing.T, view string) []string {
	var args []string
	for _, a := range daemonSet(t).Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "/") {
			a = filepath.Join(view, a)
		}
		args = append(args, a)
	}
	return args
}

// TestDaemonSet_runs runs the container's arguments through pathfinder itself, the image's build of
// it, on a node's files mounted as the manifest mounts them: the feature file appears in the host's
// features.d with an expiry four intervals on and the node's labels, every one valid to Kubernetes,
// and SIGTERM ends it cleanly.
func TestDaemonSet_runs(t *testing.T) {
	host := fakeHost(t, "NVIDIA H100 80GB HBM3", "PowerEdge XE9680")
	cmd := exec.Command(pathfinder(t), containerArgs(t, containerView(t, host))...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	started := time.Now()
	wrote := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.HasPrefix(sc.Text(), "pathfinder: wrote the feature file in ") {
				wrote <- strings.Join(lines, "\n")
				return
			}
		}
		wrote <- "no write before the end: " + strings.Join(lines, "\n")
	}()
	select {
	case log := <-wrote:
		if !strings.HasSuffix(log, ": 23 labels, driver state container-without-device-access") {
			t.Fatalf("stderr:\n%s", log)
		}
	case <-time.After(time.Minute):
		t.Fatal("no feature file written in a minute")
	}
	data, err := os.ReadFile(filepath.Join(host, featuresD, "pathfinder"))
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	expires, err := time.Parse(time.RFC3339, strings.TrimPrefix(first, "# +expiry-time="))
	if err != nil || expires.Before(started.Add(4*time.Minute-time.Second)) || expires.After(time.Now().Add(4*time.Minute)) {
		t.Errorf("expiry line %q (%v), want four minutes on", first, err)
	}
	labels := checkLabels(t, rest)
	for k, v := range map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "1", "nvidia.com/cuda.driver-version.full": "550.144.03",
		"nvidia.com/gpu.machine": "PowerEdge-XE9680", "nvidia.com/gpu.family": "hopper", "nvidia.com/gpu.mode": "compute",
		"pathfinder.feature.node.kubernetes.io/driver.state": "container-without-device-access",
	} {
		if labels[k] != v {
			t.Errorf("%s=%q, want %q", k, labels[k], v)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(host, featuresD))
	if len(entries) != 1 {
		t.Errorf("features.d holds %v", entries)
	}
}

// checkLabels reads name=value lines and holds each to Kubernetes' own label rules (k8s.io/apimachinery,
// util/validation), which nfd-master applies.
func checkLabels(t *testing.T, lines string) map[string]string {
	t.Helper()
	labels := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		k, v, _ := strings.Cut(l, "=")
		labels[k] = v
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			t.Errorf("%s=%s: %v", k, v, errs)
		}
	}
	return labels
}

// TestLabels_refusedAsKubernetesRefuses: what pathfinder writes Kubernetes takes, and each label it
// says it left out Kubernetes would refuse.
func TestLabels_refusedAsKubernetesRefuses(t *testing.T) {
	view := containerView(t, fakeHost(t, "NVIDIA "+strings.Repeat("Extremely Long Model Name ", 3), "To Be Filled By O.E.M."))
	cmd := exec.Command(pathfinder(t), "driver", "--root", filepath.Join(view, "host"), "--format", "nfd")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	checkLabels(t, string(out))
	omitted := regexp.MustCompile(`(?m)^pathfinder: not labelled: ([^=]+)=("(?:[^"\\]|\\.)*"): `).FindAllStringSubmatch(stderr.String(), -1)
	if len(omitted) != 3 { // the product, its count and the machine
		t.Fatalf("left out %q:\n%s", omitted, stderr.String())
	}
	for _, o := range omitted {
		value, _ := strconv.Unquote(o[2])
		if errs := append(validation.IsQualifiedName(o[1]), validation.IsValidLabelValue(value)...); len(errs) == 0 {
			t.Errorf("left out %s=%q, which Kubernetes takes", o[1], value)
		}
	}
}

// nodeFeature is NFD's NodeFeature as node-feature-discovery v0.19.0 declares it
// (api/nfd/v1alpha1/types.go), less the raw features, which pathfinder sends none of.
type nodeFeature struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Labels map[string]string `json:"labels"`
	} `json:"spec"`
}

// TestNodeFeature: driver --format nodefeature, as YAML and as JSON, decodes strictly into NFD's
// NodeFeature, names the node as NFD requires, and asks only for valid labels.
func TestNodeFeature(t *testing.T) {
	root := filepath.Join(containerView(t, fakeHost(t, "NVIDIA H100 80GB HBM3", "PowerEdge XE9680")), "host")
	for _, format := range [][]string{{}, {"--json"}} {
		out, err := exec.Command(pathfinder(t), append([]string{"driver", "--root", root, "--format", "nodefeature", "--node", "gpu-node-1"}, format...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		var o nodeFeature
		if err := decodeStrict(out, &o); err != nil {
			t.Fatalf("%v: %v\n%s", format, err, out)
		}
		if o.APIVersion != "nfd.k8s-sigs.io/v1alpha1" || o.Kind != "NodeFeature" || o.Name != "nvidia-features-for-gpu-node-1" ||
			len(validation.IsDNS1123Subdomain(o.Name)) > 0 || o.Labels["nfd.node.kubernetes.io/node-name"] != "gpu-node-1" || len(o.Labels) != 1 {
			t.Fatalf("%v: %+v", format, o)
		}
		var lines []string
		for k, v := range o.Spec.Labels {
			lines = append(lines, k+"="+v)
		}
		if labels := checkLabels(t, strings.Join(lines, "\n")); labels["nvidia.com/gpu.product"] != "NVIDIA-H100-80GB-HBM3" || len(labels) != 23 {
			t.Errorf("%v: labels %v", format, labels)
		}
		if json.Valid(out) != (len(format) > 0) {
			t.Errorf("%v: JSON %v", format, json.Valid(out))
		}
	}
}
