package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/engine"
)

// Test_complete: what `pathfinder __complete` offers for the word under the cursor (the last one):
// commands, each command's flags not given yet, a flag's values, and names of the kind asked for,
// each once and none already on the line.
func Test_complete(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	kinds := []string{"dynamic-lib", "header-dir", "binary", "static-lib", "bitcode"}
	tests := []struct {
		name   string
		words  []string
		want   []string // exactly these, in this order, when set
		has    []string
		hasNot []string
	}{
		{name: "commands", words: []string{""}, has: []string{"find", "load", "completion", "version"}, hasNot: []string{completeCommand}},
		{name: "a command's start", words: []string{"fi"}, want: []string{"find"}},
		{name: "an unknown command", words: []string{"fnd", ""}, want: nil},
		{name: "libraries by default", words: []string{"find", ""}, has: []string{"cudart", "nvrtc", "cublasLt"}, hasNot: []string{"cccl", "ptxas", "device"}},
		{name: "header sets", words: []string{"find", "--kind", "header-dir", ""}, has: []string{"cccl", "cudart"}, hasNot: []string{"cublasLt", "ptxas"}},
		{name: "header sets, kind after =", words: []string{"find", "--kind=header-dir", "cc"}, want: []string{"cccl"}},
		{name: "binaries", words: []string{"explain", "--kind", "binary", "pt"}, want: []string{"ptxas"}},
		{name: "bitcode", words: []string{"find", "--kind", "bitcode", ""}, has: []string{"device"}, hasNot: []string{"cudart"}},
		{name: "an unknown kind", words: []string{"find", "--kind", "shader", ""}, want: nil},
		{name: "not twice", words: []string{"find", "cudart", "nvrtc", "cu"}, has: []string{"cublas", "cufft"}, hasNot: []string{"cudart"}},
		{name: "explain takes one", words: []string{"explain", "cudart", ""}, want: nil},
		{name: "load: libraries", words: []string{"load", "cublas"}, want: []string{"cublas", "cublasLt", "cublasmp"}},
		{name: "only what the target has", words: []string{"find", "--target", "windows/amd64", "cuf"}, want: []string{"cufft", "cufftw"}},
		{name: "what this platform has", words: []string{"find", "cuf"}, want: []string{"cufft", "cufftw", "cufile", "cufftMp"}},
		{name: "--kind values", words: []string{"find", "--kind", ""}, want: kinds},
		{name: "--kind= values", words: []string{"list", "--kind=b"}, want: []string{"--kind=binary", "--kind=bitcode"}},
		{name: "--target values", words: []string{"find", "--target", ""}, want: targets},
		{name: "--target= values", words: []string{"explain", "--target=w"}, want: []string{"--target=windows/amd64", "--target=windows/arm64"}},
		{name: "--format values", words: []string{"driver", "--format", ""}, want: []string{"text", "json", "nfd", "nodefeature", "variant"}},
		{name: "--methods, after a comma", words: []string{"driver", "--methods", "sysfs,p"}, want: []string{"sysfs,procfs", "sysfs,pci"}},
		{name: "--methods, each once", words: []string{"driver", "--methods", "sysfs,s"}, want: []string{"sysfs,setup"}},
		{name: "flags", words: []string{"find", "--"}, want: []string{"--all-from-one-toolkit", "--config", "--help", "--json", "--kind", "--target"}},
		{name: "flags not given yet", words: []string{"find", "--json", "cudart", "--kind", "binary", "--"}, want: []string{"--all-from-one-toolkit", "--config", "--help", "--target"}},
		{name: "load's flags", words: []string{"load", "-"}, want: []string{"--config", "--help", "--json"}},
		{name: "after --, names", words: []string{"find", "--", "--"}, want: nil},
		{name: "--config: a file", words: []string{"list", "--config", ""}, want: []string{completeFile}},
		{name: "--config=: a file", words: []string{"list", "--config=/et"}, want: []string{completeFile}},
		{name: "--root: a directory", words: []string{"doctor", "--root", ""}, want: []string{completeDir}},
		{name: "--output: a directory", words: []string{"driver", "--output", "/t"}, want: []string{completeDir}},
		{name: "--pid: nothing", words: []string{"doctor", "--pid", ""}, want: nil},
		{name: "a bool flag takes no value", words: []string{"list", "--json", ""}, want: nil},
		{name: "config check", words: []string{"config", ""}, want: []string{"check"}},
		{name: "config check FILE", words: []string{"config", "check", ""}, want: []string{completeFile}},
		{name: "plugin new", words: []string{"plugin", ""}, want: []string{"new"}},
		{name: "plugin new NAME: nothing", words: []string{"plugin", "new", ""}, want: nil},
		{name: "plugin new NAME DIR", words: []string{"plugin", "new", "mine", ""}, want: []string{completeDir}},
		{name: "shells", words: []string{"completion", ""}, want: shells},
		{name: "help's commands", words: []string{"help", "pl"}, want: []string{"plugins", "plugin"}},
		{name: "list takes no names", words: []string{"list", ""}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := e.run(t, append([]string{completeCommand}, tt.words...)...)
			got := strings.Fields(out)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if tt.want != nil || tt.has == nil {
				if strings.Join(got, " ") != strings.Join(tt.want, " ") {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			}
			for _, w := range tt.has {
				if !slices.Contains(got, w) {
					t.Errorf("lacks %q: %q", w, got)
				}
			}
			for _, w := range tt.hasNot {
				if slices.Contains(got, w) {
					t.Errorf("offers %q: %q", w, got)
				}
			}
			seen := map[string]bool{}
			for _, w := range got {
				if seen[w] {
					t.Errorf("%q twice", w)
				}
				seen[w] = true
				if !strings.HasPrefix(w, tt.words[len(tt.words)-1]) && w != completeFile && w != completeDir {
					t.Errorf("%q does not start with the word", w)
				}
			}
		})
	}
}

// Test_complete_packs: names come from the catalog the line's --config reads, so a pack's library
// completes; a config that does not load completes no name and prints no error.
func Test_complete_packs(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "packs/acme.toml"), []byte("[[library]]\nname = \"acmefft\"\npackaged_with = \"other\"\nlinux_sonames = [\"libacmefft.so.2\"]\n"))
	config := write(t, filepath.Join(dir, "p.toml"), []byte("[packs]\ndirs = [\"packs\"]\n"))
	if out, _, _ := e.run(t, completeCommand, "find", "--config", config, "acme"); out != "acmefft\n" {
		t.Errorf("with the pack: %q", out)
	}
	if out, _, _ := e.run(t, completeCommand, "find", "acme"); out != "" {
		t.Errorf("without the pack: %q", out)
	}
	bad := write(t, filepath.Join(dir, "bad.toml"), []byte("[search]\ncolour = 1\n"))
	if out, errOut, code := e.run(t, completeCommand, "find", "--config", bad, "cu"); out != "" || errOut != "" || code != exitOK {
		t.Errorf("with a bad config: exit %d %q %q", code, out, errOut)
	}
}

// shellCase is a line typed up to the cursor, as the shell splits it into words.
type shellCase struct {
	name  string
	line  string
	words []string // bash's COMP_WORDS: "--kind=hea" is "--kind", "=", "hea"
	want  []string
}

func shellCases(dir string) []shellCase {
	return []shellCase{
		{"a command", "pathfinder fi", []string{"pathfinder", "fi"}, []string{"find"}},
		{"header sets", "pathfinder find --kind header-dir cus", []string{"pathfinder", "find", "--kind", "header-dir", "cus"},
			[]string{"cusolver", "cusparse", "cusolverMp", "cusparseLt", "custabilizer", "custatevec"}},
		{"libraries, none twice", "pathfinder find cusparse cus", []string{"pathfinder", "find", "cusparse", "cus"},
			[]string{"cusolver", "cusolverMg", "cusolverMp", "cusparseLt", "custabilizer", "custatevec"}},
		{"kinds", "pathfinder find --kind ", []string{"pathfinder", "find", "--kind", ""}, []string{"dynamic-lib", "header-dir", "binary", "static-lib", "bitcode"}},
		{"a kind after =", "pathfinder find --kind=hea", []string{"pathfinder", "find", "--kind", "=", "hea"}, []string{"header-dir"}},
		{"kinds after =", "pathfinder find --kind=", []string{"pathfinder", "find", "--kind", "="}, []string{"dynamic-lib", "header-dir", "binary", "static-lib", "bitcode"}},
		{"targets", "pathfinder list --target windows/", []string{"pathfinder", "list", "--target", "windows/"}, []string{"windows/amd64", "windows/arm64"}},
		{"flags", "pathfinder load --", []string{"pathfinder", "load", "--"}, []string{"--config", "--help", "--json"}},
		{"a config file", "pathfinder config check " + dir + "/si", []string{"pathfinder", "config", "check", dir + "/si"}, []string{dir + "/site.toml"}},
		{"a config file after =", "pathfinder find --config=" + dir + "/si", []string{"pathfinder", "find", "--config", "=", dir + "/si"}, []string{dir + "/site.toml"}},
		{"a directory", "pathfinder doctor --root " + dir + "/", []string{"pathfinder", "doctor", "--root", dir + "/"}, []string{dir + "/machine"}},
	}
}

// completionEnv makes a directory with a config file and a subdirectory, and PATH with the
// pathfinder binary first.
func completionEnv(t *testing.T) (dir string, env []string) {
	bin := noCgoBinary(t)
	e := isolate(t)
	dir = t.TempDir()
	write(t, filepath.Join(dir, "site.toml"), nil)
	os.Mkdir(filepath.Join(dir, "machine"), 0o755)
	return dir, e.Environ("PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin")
}

func sortedFields(s string) string {
	f := strings.Fields(s)
	slices.Sort(f)
	return strings.Join(f, " ")
}

// TestCompletion_bash runs the bash script's function on lines split as bash splits them.
func TestCompletion_bash(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir, env := completionEnv(t)
	for _, tc := range shellCases(dir) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			words := ""
			for _, w := range tc.words {
				words += " " + shellQuote(w)
			}
			script := `source <(pathfinder completion bash)
COMP_LINE=` + shellQuote(tc.line) + `; COMP_POINT=${#COMP_LINE}
COMP_WORDS=(` + words + `); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_pathfinder
printf '%s\n' "${COMPREPLY[@]}"`
			cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil || sortedFields(string(out)) != sortedFields(strings.Join(tc.want, " ")) {
				t.Fatalf("%v: got\n%s\nwant %q", err, out, tc.want)
			}
		})
	}
}

// TestCompletion_fish asks fish itself what it completes (complete -C), where fish is installed.
func TestCompletion_fish(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("no fish on PATH, whose own completion this test runs on the script (Debian: apt-get install fish)")
	}
	dir, env := completionEnv(t)
	for _, tc := range shellCases(dir) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(fish, "--no-config", "-c", "pathfinder completion fish | source; complete -C "+shellQuote(tc.line))
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				c, _, _ := strings.Cut(line, "\t") // fish adds a description after a tab
				got = append(got, strings.TrimSuffix(c, "/"))
			}
			// fish keeps what the word had before the value ("--kind=header-dir").
			want := slices.Clone(tc.want)
			if i := strings.LastIndex(tc.line, "="); i > strings.LastIndex(tc.line, " ") {
				prefix := tc.line[strings.LastIndex(tc.line, " ")+1 : i+1]
				for j := range want {
					want[j] = prefix + want[j]
				}
			}
			if err != nil || sortedFields(strings.Join(got, " ")) != sortedFields(strings.Join(want, " ")) {
				t.Fatalf("%v: got\n%s\nwant %q", err, out, want)
			}
		})
	}
}

// TestCompletion_zsh runs the zsh script's function with zsh's completion builtins replaced by
// ones that print what they are given, where zsh is installed.
func TestCompletion_zsh(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("no zsh on PATH, whose own completion this test runs on the script (Debian: apt-get install zsh)")
	}
	_, env := completionEnv(t)
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"pathfinder", "fi"}, "find"},
		{[]string{"pathfinder", "find", "--kind", "header-dir", "cus"}, "cusolver cusparse cusolverMp cusparseLt custabilizer custatevec"},
		{[]string{"pathfinder", "find", "cusparse", "cus"}, "cusolver cusolverMg cusolverMp cusparseLt custabilizer custatevec"},
		{[]string{"pathfinder", "find", "--kind=hea"}, "--kind=header-dir"},
		{[]string{"pathfinder", "explain", "--target", ""}, strings.Join(targets, " ")},
		{[]string{"pathfinder", "config", "check", ""}, "compset -P *= _files"},
		{[]string{"pathfinder", "find", "--config=/e"}, "compset -P *= _files"},
		{[]string{"pathfinder", "driver", "--root", ""}, "compset -P *= _files -/"},
	} {
		words := ""
		for _, w := range tc.words {
			words += " " + shellQuote(w)
		}
		script := `compdef() { }
compadd() { [[ $1 == -- ]] && shift; print -l -- "$@" }
compset() { print -- compset "$@" }
_files() { print -- _files "$@" }
source <(pathfinder completion zsh)
words=(` + words + `); CURRENT=${#words}
_pathfinder`
		cmd := exec.Command(zsh, "-f", "-c", script)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Join(strings.Fields(string(out)), " ") != tc.want {
			t.Errorf("%q: %v: got %q, want %q", tc.words, err, out, tc.want)
		}
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestTargets: --target's values, listed for its help and completion, are the ones host accepts.
func TestTargets(t *testing.T) {
	t.Parallel()
	for _, target := range targets {
		if _, err := engine.ParsePlatform(target); err != nil {
			t.Errorf("%s: %v", target, err)
		}
	}
	for _, other := range []string{"darwin/arm64", "linux/386", "windows/386", "linux/riscv64"} {
		if _, err := engine.ParsePlatform(other); err == nil {
			t.Errorf("host takes %s, which --target's list lacks", other)
		}
	}
}
