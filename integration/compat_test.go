package integration

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// compatTrees are the installs the compatibility cases run in (issue 24): NVIDIA's real CUDA 12.4
// libraries from Debian as pip installs them, dist-info and all, beside CUDA 13 wheels whose
// libraries gcc builds (Debian has no CUDA 13), and a CUDA 12.4 toolkit that says so in version.json.
type compatTrees struct {
	both    string // site-packages with the cu12 and the cu13 wheels of cudart and nvrtc
	cu13    string // site-packages with only the cu13 wheels
	mixed   string // site-packages with the cu13 cudart wheel and the cu12 nvrtc wheel
	nvrtc13 string // site-packages with only the cu13 nvrtc wheel
	toolkit string // a CUDA 12.4 toolkit root: lib64/, version.json
	cu12    map[string]string
	cu13lib map[string]string // the cu13 wheels' libraries, by name
}

func buildCompatTrees(t *testing.T, tr *trees, dir string) *compatTrees {
	ct := &compatTrees{cu12: map[string]string{}, cu13lib: map[string]string{}}
	cu13 := filepath.Join(dir, "cu13-libs")
	for name, soname := range map[string]string{"cudart": "libcudart.so.13", "nvrtc": "libnvrtc.so.13"} {
		ct.cu13lib[name] = filepath.Join(cu13, soname)
		elfso.Build(t, ct.cu13lib[name], soname, "int version(void) { return 13000; }\n")
	}
	wheels := map[string]func(site string){
		"cudart12": func(site string) {
			ct.cu12["cudart"] = wheel(t, site, "nvidia-cuda-runtime-cu12", "12.4.127", map[string]string{
				"nvidia/cuda_runtime/lib/libcudart.so.12": tr.pkgs["trixie/libcudart12"].Lib("libcudart.so.12")})
		},
		"nvrtc12": func(site string) {
			ct.cu12["nvrtc"] = wheel(t, site, "nvidia-cuda-nvrtc-cu12", "12.4.127", map[string]string{
				"nvidia/cuda_nvrtc/lib/libnvrtc.so.12":            tr.pkgs["trixie/libnvrtc12"].Lib("libnvrtc.so.12"),
				"nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.4": tr.pkgs["trixie/libnvrtc-builtins12.4"].Lib("libnvrtc-builtins.so.12.4")})
		},
		"cudart13": func(site string) {
			wheel(t, site, "nvidia-cuda-runtime", "13.0.96", map[string]string{"nvidia/cu13/lib/libcudart.so.13": ct.cu13lib["cudart"]})
		},
		"nvrtc13": func(site string) {
			wheel(t, site, "nvidia-cuda-nvrtc", "13.0.88", map[string]string{"nvidia/cu13/lib/libnvrtc.so.13": ct.cu13lib["nvrtc"]})
		},
	}
	site := func(name string, with ...string) string {
		s := filepath.Join(dir, name, "lib", "python3.12", "site-packages")
		for _, w := range with {
			wheels[w](s)
		}
		return s
	}
	ct.both = site("venv-both", "cudart12", "nvrtc12", "cudart13", "nvrtc13")
	ct.cu13 = site("venv-cu13", "cudart13", "nvrtc13")
	ct.mixed = site("venv-mixed", "cudart13", "nvrtc12")
	ct.nvrtc13 = site("venv-nvrtc13", "nvrtc13")

	ct.toolkit = filepath.Join(dir, "cuda-12.4")
	for _, l := range []cudaLib{byName("cudart"), byName("nvrtc"), cuda124[4]} { // cuda124[4]: nvrtc's builtins
		tr.install(t, l.pkg, l.soname, filepath.Join(ct.toolkit, "lib64"))
	}
	versionJSON := `{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}, "cuda_nvrtc": {"name": "CUDA NVRTC", "version": "12.4.127"}}`
	if err := os.WriteFile(filepath.Join(ct.toolkit, "version.json"), []byte(versionJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	return ct
}

// wheel installs a wheel into site as pip does: its files (hard links to src), and a dist-info
// with METADATA and a RECORD that lists each file with its hash and size. It returns the path of its
// library (nvrtc's builtins ride along).
func wheel(t *testing.T, site, dist, version string, files map[string]string) string {
	info := filepath.Join(site, strings.ReplaceAll(dist, "-", "_")+"-"+version+".dist-info")
	var record strings.Builder
	first := ""
	for rel, src := range files {
		dst := filepath.Join(site, rel)
		realnv.Place(t, src, dst)
		data, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", rel, base64.RawURLEncoding.EncodeToString(sum[:]), len(data))
		if !strings.Contains(rel, "builtins") {
			first = dst
		}
	}
	rel, _ := filepath.Rel(site, info)
	fmt.Fprintf(&record, "%s/METADATA,,\n%s/RECORD,,\n", rel, rel)
	for name, body := range map[string]string{
		"METADATA":  fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: a wheel as NVIDIA publishes it\n", dist, version),
		"RECORD":    record.String(),
		"INSTALLER": "pip\n",
	} {
		if err := os.MkdirAll(info, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(info, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return first
}

// compatWant is what a compatibility case expects of a find or load: the file and its CUDA and
// compat, or a failure of the code, saying each of says.
type compatWant struct {
	path, cuda, compat string
	code               string
	says               []string
}

// compatCase runs op --json names... in a fresh process with the driver pinned (driver "" for
// none) and expects each name's line in turn.
func compatCase(name, driver string, env map[string]string, op string, names []string, wants ...compatWant) check {
	return check{name, func(t *testing.T, s *suite, layoutEnv map[string]string) {
		e := map[string]string{"PATHFINDER_DRIVER_VERSION": driver}
		for _, m := range []map[string]string{layoutEnv, env} {
			for k, v := range m {
				e[k] = v
			}
		}
		args := append([]string{op, "--json"}, names...)
		stdout, stderr, code := s.exec(t, e, s.pathfinder, args...)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != len(wants) {
			t.Fatalf("pathfinder %s (driver %q): exit %d, %d lines, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), driver, code, len(lines), len(wants), stdout, stderr)
		}
		failed := false
		for i, w := range wants {
			var got struct {
				answer
				CUDA   string `json:"cuda"`
				Compat string `json:"compat"`
			}
			if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
				t.Fatalf("line %d: %v: %s", i, err, lines[i])
			}
			where := fmt.Sprintf("pathfinder %s (driver %q), %s", strings.Join(args, " "), driver, got.Name)
			switch {
			case w.code == "" && (got.Error != "" || got.Path != w.path || got.CUDA != w.cuda || got.Compat != w.compat):
				t.Errorf("%s: got %s, CUDA %q, compat %q (error %q: %s); want %s, CUDA %q, compat %q", where, got.Path, got.CUDA, got.Compat, got.Error, got.Message, w.path, w.cuda, w.compat)
				failed = true
			case w.code != "" && got.Error != w.code:
				t.Errorf("%s: error %q (%s), want %q", where, got.Error, got.Message, w.code)
				failed = true
			}
			for _, say := range w.says {
				if !strings.Contains(lines[i], say) {
					t.Errorf("%s: the line does not say %q: %s", where, say, lines[i])
					failed = true
				}
			}
		}
		if wantCode := map[bool]int{true: 1, false: 0}[slices.ContainsFunc(wants, func(w compatWant) bool { return w.code != "" })]; code != wantCode {
			t.Errorf("pathfinder %s (driver %q): exit %d, want %d", strings.Join(args, " "), driver, code, wantCode)
			failed = true
		}
		if failed {
			t.Logf("stderr: %s", stderr)
		}
	}}
}

func compatLayouts(tr *trees, ct *compatTrees) []layout {
	cu12, cu13 := ct.cu12, map[string]string{}
	for name := range ct.cu13lib {
		cu13[name] = filepath.Join(ct.both, "nvidia", "cu13", "lib", filepath.Base(ct.cu13lib[name]))
	}
	in := func(site, name string) string { return strings.Replace(cu13[name], ct.both, site, 1) }
	cuda13 := compatWant{path: cu13["cudart"], cuda: "13.0", compat: "full"}
	cuda12 := func(compat string) compatWant { return compatWant{path: cu12["cudart"], cuda: "12.4", compat: compat} }
	passed := "CUDA 13.0: driver 550.54.14 runs CUDA 12.4 at most (CUDA 13.0 needs 580.65.06)"
	noDriver := compatWant{path: cu13["cudart"], cuda: "13.0", says: []string{"no driver check"}}

	var out []layout
	out = append(out, layout{"compatibility: cu12 and cu13 wheels side by side", map[string]string{"PATHFINDER_SITE_PACKAGES": ct.both}, []check{
		compatCase("find cudart, driver 550: the cu12 runtime", "550.54.14", nil, "find", []string{"cudart"},
			compatWant{path: cu12["cudart"], cuda: "12.4", compat: "full", says: []string{`"passed_over"`, passed}}),
		compatCase("load cudart, driver 550: the cu12 runtime", "550.54.14", nil, "load", []string{"cudart"}, cuda12("full")),
		compatCase("find cudart, driver 535: the cu12 runtime by minor-version compatibility", "535.104.05", nil, "find", []string{"cudart"},
			compatWant{path: cu12["cudart"], cuda: "12.4", compat: "minor-version", says: []string{"PTX"}}),
		compatCase("find cudart, driver 580: the cu13 runtime", "580.65.06", nil, "find", []string{"cudart"}, cuda13),
		compatCase("load cudart nvrtc, driver 580: both cu13", "580.65.06", nil, "load", []string{"cudart", "nvrtc"},
			cuda13, compatWant{path: cu13["nvrtc"], cuda: "13.0", compat: "full"}),
		{"find cudart, no driver: the first, unchecked", func(t *testing.T, s *suite, env map[string]string) {
			if _, err := os.Stat("/sys/module/nvidia"); err == nil {
				t.Skip("this machine has an NVIDIA driver: the case is for one without")
			}
			compatCase("", "", nil, "find", []string{"cudart"}, noDriver).run(t, s, env)
		}},
		compatCase("find cudart, driver 550, off: today's answer", "550.54.14", map[string]string{"PATHFINDER_COMPATIBILITY": "off"}, "find", []string{"cudart"},
			compatWant{path: cu13["cudart"], cuda: "13.0"}),
		compatCase("find cudart nvrtc, driver 550, PATHFINDER_CUDA=13: nothing runs", "550.54.14", map[string]string{"PATHFINDER_CUDA": "13"}, "find", []string{"cudart", "nvrtc"},
			compatWant{code: "incompatible"}, compatWant{code: "incompatible"}),
		compatCase("find cudart, driver 580, PATHFINDER_CUDA=12: the cu12 runtime", "580.65.06", map[string]string{"PATHFINDER_CUDA": "12"}, "find", []string{"cudart"},
			compatWant{path: cu12["cudart"], cuda: "12.4", compat: "full", says: []string{"the program is built for CUDA 12"}}),
		{"one cache across pins: 550, 580, 550, then off", func(t *testing.T, s *suite, env map[string]string) {
			for _, c := range []struct{ driver, mode, path string }{
				{"550.54.14", "", cu12["cudart"]}, {"580.65.06", "", cu13["cudart"]}, {"550.54.14", "", cu12["cudart"]}, {"550.54.14", "off", cu13["cudart"]},
			} {
				compatCase("", c.driver, map[string]string{"PATHFINDER_COMPATIBILITY": c.mode}, "find", []string{"cudart"}, compatWant{path: c.path, cuda: map[bool]string{true: "12.4", false: "13.0"}[c.path == cu12["cudart"]],
					compat: map[bool]string{true: "", false: "full"}[c.mode == "off"]}).run(t, s, env)
			}
		}},
	}})
	out = append(out, layout{"compatibility: only cu13 wheels", map[string]string{"PATHFINDER_SITE_PACKAGES": ct.cu13}, []check{
		compatCase("find cudart, driver 550: incompatible", "550.54.14", nil, "find", []string{"cudart"},
			compatWant{code: "incompatible", says: []string{"driver 550.54.14 runs CUDA 12.4 at most", in(ct.cu13, "cudart"), "CUDA 13.0 needs 580.65.06"}}),
		compatCase("load cudart, driver 550: incompatible", "550.54.14", nil, "load", []string{"cudart"}, compatWant{code: "incompatible"}),
		compatCase("find cudart, driver 550, best-effort: incompatible", "550.54.14", map[string]string{"PATHFINDER_COMPATIBILITY": "best-effort"}, "find", []string{"cudart"},
			compatWant{code: "incompatible"}),
	}})
	debian := filepath.Join(tr.debian, "libcudart.so.12")
	out = append(out, layout{"compatibility: Debian's CUDA 12.4 on LD_LIBRARY_PATH", map[string]string{"LD_LIBRARY_PATH": tr.debian}, []check{
		compatCase("find cudart, driver 525.60.13: minor-version", "525.60.13", nil, "find", []string{"cudart"},
			compatWant{path: debian, cuda: "12.4", compat: "minor-version", says: []string{`"version":"12.4.127"`, `"version_from":"file-name"`}}),
		compatCase("load cudart, driver 525.60.13: minor-version", "525.60.13", nil, "load", []string{"cudart"},
			compatWant{path: debian, cuda: "12.4", compat: "minor-version"}),
		compatCase("find cudart, driver 450.80.02: incompatible", "450.80.02", nil, "find", []string{"cudart"},
			compatWant{code: "incompatible", says: []string{"driver 450.80.02 runs CUDA 11.0 at most", debian}}),
		compatCase("load cudart, driver 450.80.02: incompatible", "450.80.02", nil, "load", []string{"cudart"}, compatWant{code: "incompatible"}),
	}})
	out = append(out, layout{"compatibility: cudart from a 12.4 toolkit, nvrtc's cu13 wheel first", map[string]string{"PATHFINDER_SITE_PACKAGES": ct.nvrtc13, "CUDA_HOME": ct.toolkit}, []check{
		compatCase("load cudart nvrtc, driver 580: nvrtc from CUDA 12 too", "580.65.06", nil, "load", []string{"cudart", "nvrtc"},
			compatWant{path: filepath.Join(ct.toolkit, "lib64", "libcudart.so.12"), cuda: "12.4", compat: "full"},
			compatWant{path: filepath.Join(ct.toolkit, "lib64", "libnvrtc.so.12"), cuda: "12.4", compat: "full",
				says: []string{"CUDA 13.0, but cudart already came from CUDA 12.4 (" + filepath.Join(ct.toolkit, "lib64", "libcudart.so.12") + ")"}}),
		compatCase("load nvrtc alone, driver 580: the cu13 wheel", "580.65.06", nil, "load", []string{"nvrtc"},
			compatWant{path: in(ct.nvrtc13, "nvrtc"), cuda: "13.0", compat: "full"}),
	}})
	out = append(out, layout{"compatibility: --all-from-one-toolkit, cu13 cudart and cu12 nvrtc in one site-packages", map[string]string{"PATHFINDER_SITE_PACKAGES": ct.mixed}, []check{
		compatCase("find --all-from-one-toolkit cudart nvrtc: mixed-toolkits", "", nil, "find", []string{"--all-from-one-toolkit", "cudart", "nvrtc"},
			compatWant{code: "mixed-toolkits", says: []string{"cudart CUDA 13.0, nvrtc CUDA 12.4"}}, compatWant{code: "mixed-toolkits"}),
	}})
	return out
}
