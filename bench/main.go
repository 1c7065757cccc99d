// Command bench measures `pathfinder find cudart` on a fake venv, side by side with its floors, in
// one run, and prints min/median/max and ratios:
//
//	go run ./bench            # 15 runs per case
//	go run ./bench -n 40
//
// Cases: a fresh process with no caches at all; a fresh process with a warm compilation cache; the
// in-process repeated Find; the same search done natively in Go without wasm (fresh process and in
// process); a hello-world Go binary; and NVIDIA's Python cuda.pathfinder when python3 can import it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pathfinder-dev/pathfinder/bench/nativefind"
	"github.com/pathfinder-dev/pathfinder/host"
)

type result struct {
	name   string
	times  []time.Duration
	maxRSS int64 // KiB, peak over the runs; 0 for in-process cases
	note   string
}

func main() {
	n := flag.Int("n", 15, "runs per case")
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(n int) error {
	tmp, err := os.MkdirTemp("", "pathfinder-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bins := map[string]string{}
	for name, pkg := range map[string]string{"pathfinder": "./cmd/pathfinder", "native": "./bench/native", "hello": "./bench/hello"} {
		bins[name] = filepath.Join(tmp, name)
		cmd := exec.Command("go", "build", "-o", bins[name], pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	site := filepath.Join(tmp, "venv", "lib", "python3.12", "site-packages")
	lib := filepath.Join(site, "nvidia", "cu13", "lib", "libcudart.so.13")
	if err := gccLib(lib, "libcudart.so.13"); err != nil {
		return err
	}
	env := []string{"PATHFINDER_SITE_PACKAGES=" + site, "HOME=" + tmp, "XDG_CONFIG_HOME=" + filepath.Join(tmp, "config"), "PATH=/usr/bin:/bin"}
	warm := filepath.Join(tmp, "warm-cache")
	warmup := exec.Command(bins["pathfinder"], "find", "cudart")
	warmup.Env = append(env, "PATHFINDER_CACHE_DIR="+warm)
	if out, err := warmup.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != lib {
		return fmt.Errorf("pathfinder find cudart: %v: %s", err, out)
	}

	var results []result
	i := 0
	results = append(results, procCase("pathfinder find, no caches", n, func() *exec.Cmd {
		i++
		cmd := exec.Command(bins["pathfinder"], "find", "cudart")
		cmd.Env = append(env, fmt.Sprintf("PATHFINDER_CACHE_DIR=%s/cold-%d", tmp, i))
		return cmd
	}))
	results = append(results, procCase("pathfinder find, warm compilation cache", n, func() *exec.Cmd {
		cmd := exec.Command(bins["pathfinder"], "find", "cudart")
		cmd.Env = append(env, "PATHFINDER_CACHE_DIR="+warm)
		return cmd
	}))
	results = append(results, procCase("native search, fresh process (floor)", n, func() *exec.Cmd {
		cmd := exec.Command(bins["native"])
		cmd.Env = env
		return cmd
	}))
	results = append(results, procCase("hello-world Go binary", n, func() *exec.Cmd { return exec.Command(bins["hello"]) }))
	if err := exec.Command("python3", "-c", "import cuda.pathfinder").Run(); err == nil {
		results = append(results, procCase("python cuda.pathfinder load_nvidia_dynamic_lib", n, func() *exec.Cmd {
			cmd := exec.Command("python3", "-c", "from cuda.pathfinder import load_nvidia_dynamic_lib as l; print(l('cudart').abs_path)")
			cmd.Env = append(os.Environ(), "PYTHONPATH="+site)
			return cmd
		}))
	} else {
		results = append(results, result{name: "python cuda.pathfinder", note: "skipped: python3 cannot import cuda.pathfinder here"})
	}

	// In process.
	for _, k := range env {
		kv := strings.SplitN(k, "=", 2)
		os.Setenv(kv[0], kv[1])
	}
	os.Setenv("PATHFINDER_CACHE_DIR", warm)
	f, err := host.New(host.Options{})
	if err != nil {
		return err
	}
	ctx := context.Background()
	if _, err := f.Find(ctx, "cudart"); err != nil {
		return err
	}
	results = append(results, loopCase("in-process Find, repeated (remembered)", n, 100000, func() {
		f.Find(ctx, "cudart")
	}))
	results = append(results, loopCase("in-process search, not remembered (Explain)", n, 50, func() {
		f.Explain(ctx, host.DynamicLib, "cudart")
	}))
	sites := []string{site}
	results = append(results, loopCase("in-process native search (floor)", n, 2000, func() {
		nativefind.Find(sites)
	}))

	fmt.Printf("pathfinder find cudart on a fake venv; %d runs per case; %s, %d CPUs\n\n", n, runtime.Version(), runtime.NumCPU())
	fmt.Printf("%-48s %12s %12s %12s %10s %10s\n", "case", "min", "median", "max", "ratio", "peak RSS")
	floor := median(results[2].times)
	inFloor := median(results[len(results)-1].times)
	for _, r := range results {
		if r.note != "" {
			fmt.Printf("%-48s %s\n", r.name, r.note)
			continue
		}
		base := floor
		if r.maxRSS == 0 {
			base = inFloor
		}
		rss := "-"
		if r.maxRSS > 0 {
			rss = fmt.Sprintf("%.1f MiB", float64(r.maxRSS)/1024)
		}
		t := slices.Clone(r.times)
		slices.Sort(t)
		fmt.Printf("%-48s %12s %12s %12s %9.1fx %10s\n", r.name, t[0], median(t), t[len(t)-1], float64(median(t))/float64(base), rss)
	}
	fmt.Println("\nratio: against the native search in a fresh process (process cases) or in process (in-process cases)")
	return nil
}

func procCase(name string, n int, mk func() *exec.Cmd) result {
	r := result{name: name}
	for range n {
		cmd := mk()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			return result{name: name, note: fmt.Sprintf("failed: %v: %s", err, strings.TrimSpace(string(out)))}
		}
		r.times = append(r.times, d)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.maxRSS = max(r.maxRSS, ru.Maxrss)
		}
	}
	return r
}

// loopCase times batches of iters calls and records the per-call time of each batch.
func loopCase(name string, n, iters int, fn func()) result {
	r := result{name: name}
	for range n {
		start := time.Now()
		for range iters {
			fn()
		}
		r.times = append(r.times, time.Since(start)/time.Duration(iters))
	}
	return r
}

func median(t []time.Duration) time.Duration {
	s := slices.Clone(t)
	slices.Sort(s)
	return s[len(s)/2]
}

func gccLib(path, soname string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	src := path + ".c"
	if err := os.WriteFile(src, []byte("int marker(void) { return 1; }\n"), 0o644); err != nil {
		return err
	}
	defer os.Remove(src)
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-Wl,-soname,"+soname, "-o", path, src).CombinedOutput(); err != nil {
		return fmt.Errorf("gcc: %v\n%s", err, out)
	}
	return nil
}
