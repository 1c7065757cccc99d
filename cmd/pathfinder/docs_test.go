package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// TestDocs_pathsExist: every file or folder of the repository a document names in backquotes is
// there; a placeholder (<name>, NAME, mine, a glob) is not a path.
func TestDocs_pathsExist(t *testing.T) {
	t.Parallel()
	quoted := regexp.MustCompile("`([^`\\s]+)`")
	repoPath := regexp.MustCompile(`^(abi|builtin|cmd|host|plugins|internal|examples|docs|testdata|integration|bench|deploy|\.ci)/`)
	placeholder := regexp.MustCompile(`[<*{]|mine|NAME`)
	named := 0
	for _, doc := range docs(t) {
		for _, m := range quoted.FindAllStringSubmatch(doc.text, -1) {
			p, _, _ := strings.Cut(strings.TrimSuffix(m[1], "/"), ":")
			if !repoPath.MatchString(p) || placeholder.MatchString(p) {
				continue
			}
			named++
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				t.Errorf("%s names %s, which is not in the repository", doc.path, m[1])
			}
		}
	}
	if named < 30 {
		t.Fatalf("only %d paths named in the documents: the pattern lost them", named)
	}
}

// TestDocs_pluginInstallLine: docs/plugins.md's install line works where the directory it installs
// into does not exist yet, as on a fresh machine.
func TestDocs_pluginInstallLine(t *testing.T) {
	t.Parallel()
	line := regexp.MustCompile(`(?m)^sudo (install [^#\n]*?)\s*(#.*)?$`).FindStringSubmatch(repoFile(t, "docs/plugins.md"))
	if line == nil {
		t.Fatal("docs/plugins.md has no install line")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "mine.wasm"), []byte("\x00asm\x01\x00\x00\x00"))
	args := strings.Fields(strings.ReplaceAll(line[1], "/etc/", filepath.Join(dir, "etc")+"/"))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	if fi, err := os.Stat(filepath.Join(dir, "etc/pathfinder/plugins/mine.wasm")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("installed: %v %v", fi, err)
	}
}

// TestDocs_doctorChecks: docs/driver.md's table of doctor's checks names golden files that exist,
// and says of the checks' end-to-end test what it does.
func TestDocs_doctorChecks(t *testing.T) {
	t.Parallel()
	doc := strings.Join(strings.Fields(strings.ReplaceAll(repoFile(t, "docs/driver.md"), "`", "")), " ")
	goldens := regexp.MustCompile(`([a-z0-9-]+\.txt)`).FindAllStringSubmatch(doc, -1)
	if len(goldens) < 10 {
		t.Fatalf("docs/driver.md names %d golden files", len(goldens))
	}
	for _, g := range goldens {
		if _, err := os.Stat(filepath.Join("testdata/doctor", g[1])); err != nil {
			t.Errorf("docs/driver.md names %s: %v", g[1], err)
		}
	}
	for _, stale := range []string{"report nothing", "skips saying so", "is adding"} {
		if strings.Contains(doc, stale) {
			t.Errorf("docs/driver.md still says %q", stale)
		}
	}
	if !strings.Contains(doc, "TestDoctor_hostInputsEndToEnd runs both checks end to end") {
		t.Error("docs/driver.md does not say what TestDoctor_hostInputsEndToEnd does")
	}
}

// TestHelp_exitStatus: pathfinder --help says what README says of the exit status, refused and
// not loadable included.
func TestHelp_exitStatus(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	help, _, _ := e.run(t, "--help")
	help = strings.Join(strings.Fields(help), " ")
	_, status, _ := strings.Cut(readme(t), "Exit status: ")
	status, _, _ = strings.Cut(status, ".")
	if !strings.Contains(status, "found but refused, not loadable by load") || !strings.Contains(help, "Exit status: "+status+".") {
		t.Fatalf("pathfinder --help's exit status differs from README's %q:\n%s", status, help)
	}
}

// TestREADME_quickStart: README opens with the two commands, then a quick start whose every line
// works on this machine: go install puts pathfinder in GOBIN; doctor, without a driver, answers
// no-driver and exits 1, which go run reports as "exit status 1"; the fetch command is the one the
// skipping tests name.
func TestREADME_quickStart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go install and go run")
	}
	data := repoFile(t, "README.md")
	first := "# pathfinder\n\n```sh\ngo run ./cmd/pathfinder doctor "
	if !strings.HasPrefix(data, first) || !strings.Contains(strings.SplitN(data, "```\n", 2)[0], "\ngo test -race ./... ") {
		t.Fatalf("README does not open with the two commands, run and test")
	}
	quick := regexp.MustCompile("(?s)\n## Quick start\n.*?```sh\n(.*?)```").FindStringSubmatch(data)
	if quick == nil {
		t.Fatal("README has no quick start")
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(quick[1]), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		lines = append(lines, strings.TrimSpace(cmd))
	}
	if want := []string{"go install ./cmd/pathfinder", "pathfinder doctor", realnv.FetchCommand, "go test ./..."}; strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("quick start runs %q, want %q", lines, want)
	}
	fetch, err := os.ReadFile(filepath.Join("../..", strings.Fields(realnv.FetchCommand)[1]))
	if err != nil || !strings.Contains(string(fetch), "\ndir=${1:-${PATHFINDER_REALNV_DIR:-$HOME/.cache/pathfinder-realnv}}\n") {
		t.Fatalf("fetch.sh does not unpack into $PATHFINDER_REALNV_DIR, else ~/.cache/pathfinder-realnv: %v", err)
	}
	if goToolErr != nil {
		t.Skip("go not on PATH")
	}
	gobin := t.TempDir()
	install := exec.Command(goTool, "install", "./cmd/pathfinder")
	install.Dir = "../.."
	install.Env = append(os.Environ(), "GOBIN="+gobin, "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/pathfinder: %v\n%s", err, out)
	}
	e := isolate(t)
	noDriver := t.TempDir() // a machine without an NVIDIA driver
	out, _, code := runCommand(t, e.command(filepath.Join(gobin, "pathfinder"), "doctor", "--root", noDriver))
	if code != exitNotFound || !strings.Contains(out, "no-driver") {
		t.Fatalf("pathfinder doctor without a driver: exit %d\n%s", code, out)
	}
	goRun := exec.Command(goTool, "run", "./cmd/pathfinder", "doctor", "--root", noDriver)
	goRun.Dir = "../.."
	goRun.Env = e.Environ(goEnv...)
	_, errOut, code := runCommand(t, goRun)
	if code != exitNotFound || !strings.HasSuffix(errOut, "exit status 1\n") {
		t.Fatalf("go run ./cmd/pathfinder doctor: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"doctor exits 1 when it lists a problem, and a machine without an NVIDIA driver has one: that is its answer, not a failure. go run ./cmd/pathfinder doctor passes the status on and then prints exit status 1.",
		"with PATHFINDER_REALNV_DIR set, it unpacks there and the tests read the libraries from there.",
	} {
		if !strings.Contains(readme(t), want) {
			t.Errorf("README lacks %q", want)
		}
	}
}

// TestArchitecture_callOrder: every function ARCHITECTURE.md names in its call order of `pathfinder
// load cudart` (`Type.method` or `package.Function`) is declared in the repository, so the walk a
// reader follows is the code's.
func TestArchitecture_callOrder(t *testing.T) {
	t.Parallel()
	_, order, _ := strings.Cut(repoFile(t, "ARCHITECTURE.md"), "## `pathfinder load cudart`, in call order")
	order, _, _ = strings.Cut(order, "\n## ")
	src := goSource(false)
	named := 0
	for _, m := range regexp.MustCompile("`(\\w+)\\.(\\w+)`").FindAllStringSubmatch(order, -1) {
		recv, fn := m[1], m[2]
		if recv == "os" || fn == "go" || fn == "toml" || fn == "wasm" { // the standard library's, a file's name
			continue
		}
		method := regexp.MustCompile(`func \(\w+ \*?` + recv + `\) ` + fn + `\(`)
		named++
		if !method.MatchString(src) && !strings.Contains(src, "\nfunc "+fn+"(") {
			t.Errorf("ARCHITECTURE.md names %s.%s, which no file declares", recv, fn)
		}
	}
	if named < 10 {
		t.Fatalf("only %d functions named in the call order: the pattern lost them", named)
	}
}

// TestDocs_testsExist: every test, fuzzer or benchmark a document names in backquotes is declared
// in some test file of the module: a document that says a test holds something names one that runs.
func TestDocs_testsExist(t *testing.T) {
	t.Parallel()
	src := goSource(true)
	named := 0
	for _, doc := range docs(t) {
		for _, m := range regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Z]\\w*)`").FindAllStringSubmatch(doc.text, -1) {
			named++
			if !strings.Contains(src, "func "+m[1]+"(") {
				t.Errorf("%s names %s, which no test file declares", doc.path, m[1])
			}
		}
	}
	if named < 10 {
		t.Fatalf("only %d tests named in the documents: the pattern lost them", named)
	}
}

// TestArchitecture_packages: ARCHITECTURE.md's code map names every internal package the module
// has, under the root internal/ by its path there (a nested one by its path or its last element)
// and under another parent by its whole path; every internal package it names in backquotes is
// there; and the parents it says keep an internal/ of their own are the only ones that do.
func TestArchitecture_packages(t *testing.T) {
	t.Parallel()
	doc := repoFile(t, "ARCHITECTURE.md")
	_, codeMap, _ := strings.Cut(doc, "## The code map")
	codeMap, _, _ = strings.Cut(codeMap, "\n## ")
	out, err := exec.Command("go", "list", "../../...").Output()
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/pathfinder-dev/pathfinder/"
	word := func(w string) bool {
		return regexp.MustCompile(`(^|[\s,(])` + regexp.QuoteMeta(w) + `($|[\s,/)])`).MatchString(codeMap)
	}
	parents := map[string]bool{}
	checked := 0
	for _, pkg := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(pkg, module)
		if rel, ok := strings.CutPrefix(rel, "internal/"); ok {
			checked++
			if !word(rel) && !word(rel[strings.LastIndex(rel, "/")+1:]) {
				t.Errorf("ARCHITECTURE.md's code map does not name internal/%s", rel)
			}
			continue
		}
		if parent, _, ok := strings.Cut(rel, "/internal/"); ok {
			checked++
			parents[parent] = true
			if !word(rel) {
				t.Errorf("ARCHITECTURE.md's code map does not name %s", rel)
			}
		}
	}
	if checked < 25 {
		t.Fatalf("only %d internal packages listed: go list lost them", checked)
	}
	for _, m := range regexp.MustCompile("`(internal/[a-z_./]+)").FindAllStringSubmatch(doc, -1) {
		if _, err := os.Stat(filepath.Join("../..", strings.TrimSuffix(m[1], "/"))); err != nil {
			t.Errorf("ARCHITECTURE.md names %s, which is not in the repository", m[1])
		}
	}
	said := regexp.MustCompile("(?s)keep\\s+a\\s+private\\s+`internal/`\\s+of\\s+their\\s+own\\s+for\\s+what\\s+only\\s+they\\s+use:\\s+(.*?)\\.\\s").FindStringSubmatch(doc)
	if said == nil {
		t.Fatal("ARCHITECTURE.md's sentence on the other internal/ trees not found")
	}
	var named []string
	for _, m := range regexp.MustCompile("`([a-z/]+)/internal/[a-z]+`").FindAllStringSubmatch(said[1], -1) {
		named = append(named, m[1])
		if !parents[m[1]] {
			t.Errorf("ARCHITECTURE.md says %s keeps an internal/ of its own; it has none", m[1])
		}
	}
	if len(named) != len(parents) {
		t.Errorf("ARCHITECTURE.md names %v as keeping an internal/ of their own; the module has %v", named, parents)
	}
}

// TestDocs_kubernetesLabels: docs/kubernetes.md's table names every label a captured node's golden
// label set holds (host/driver/testdata/labels), and each label it names is in one of them unless
// its row says it is not written; its example of several models is that node's.
func TestDocs_kubernetesLabels(t *testing.T) {
	t.Parallel()
	doc := repoFile(t, "docs/kubernetes.md")
	_, table, _ := strings.Cut(doc, "| label | source | GFD's name |")
	table, _, _ = strings.Cut(table, "\n\n")
	documented := map[string]bool{} // label name (<product> as is) → written
	for _, row := range strings.Split(table, "\n")[2:] {
		first := strings.Split(row, " | ")[0]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
			documented[m[1]] = !strings.Contains(row, "| not written")
		}
	}
	goldens, _ := filepath.Glob("../../host/driver/testdata/labels/*.txt")
	written := map[string]bool{}
	for _, g := range goldens {
		data, _ := os.ReadFile(g)
		for _, line := range strings.Split(string(data), "\n") {
			name, _, found := strings.Cut(line, "=")
			if !found || strings.HasPrefix(line, "#") {
				continue
			}
			name = regexp.MustCompile(`/gpu\..+\.count$`).ReplaceAllString(name, "/gpu.<product>.count")
			written[name] = true
			if !documented[name] {
				t.Errorf("%s writes %s, which docs/kubernetes.md's table does not name as written", filepath.Base(g), name)
			}
		}
	}
	for name, isWritten := range documented {
		if isWritten != written[name] {
			t.Errorf("docs/kubernetes.md: %s is written: %v; in a golden label set: %v", name, isWritten, written[name])
		}
	}
	if len(goldens) < 7 || len(documented) < 20 {
		t.Fatalf("%d goldens, %d labels in the table", len(goldens), len(documented))
	}
	twoModels, _ := os.ReadFile("../../host/driver/testdata/labels/two-models-container.txt")
	_, example, _ := strings.Cut(doc, "**Several models.**")
	example, _, _ = strings.Cut(example, "\n\n")
	for _, m := range regexp.MustCompile("`((?:nvidia.com/)?gpu[^`=]*)=([^`]+)`").FindAllStringSubmatch(strings.Join(strings.Fields(example), " "), -1) {
		if !regexp.MustCompile(`(?m)^[^#]*` + regexp.QuoteMeta(m[1]+"="+m[2]) + `$`).Match(twoModels) {
			t.Errorf("docs/kubernetes.md's example %s=%s is not in two-models-container.txt", m[1], m[2])
		}
	}
}

// TestREADME_testCosts: what README says the tests cost and skip holds. The tests that skip
// without clang, zsh or fish exist and say what installs what is missing; the libraries fetch.sh
// unpacks, where they were fetched, are about the size README says.
func TestREADME_testCosts(t *testing.T) {
	t.Parallel()
	r := readme(t)
	if !strings.Contains(r, "it unpacks about 1.3 GB;") || !strings.Contains(r, "go test -race ./... took 2 minutes 10 seconds on this project's 2-core machines") ||
		!strings.Contains(r, "Without clang and wasi-libc, builtin's TestStepsModuleRebuilds skips; without zsh or fish, TestCompletion_zsh or TestCompletion_fish; each says what is missing and what installs it") {
		t.Fatal("README does not say what the tests cost and which skip")
	}
	for file, says := range map[string][]string{
		"../../builtin/builtin_test.go":                 {"func TestStepsModuleRebuilds(", "wasmbuild.Compiler()"},
		"../../builtin/internal/wasmbuild/wasmbuild.go": {"(Debian: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32)"},
		"completion_test.go":                            {"func TestCompletion_zsh(", "(Debian: apt-get install zsh)", "func TestCompletion_fish(", "(Debian: apt-get install fish)"},
	} {
		b, err := os.ReadFile(file)
		for _, s := range says {
			if err != nil || !strings.Contains(string(b), s) {
				t.Errorf("%s lacks %q: %v", file, s, err)
			}
		}
	}
	var size int64
	for _, suite := range []string{"trixie", "bookworm"} {
		filepath.WalkDir(filepath.Join(realnv.Dir(), suite), func(_ string, d fs.DirEntry, err error) error {
			if fi, ierr := d.Info(); err == nil && ierr == nil && d.Type().IsRegular() {
				size += fi.Size()
			}
			return nil
		})
	}
	if size > 0 && (size < 1.0e9 || size > 1.6e9) {
		t.Errorf("fetch.sh unpacked %.2f GB into %s; README says about 1.3 GB", float64(size)/1e9, realnv.Dir())
	}
}
