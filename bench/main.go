// Command bench measures pathfinder against its floors and targets in one run and prints
// min/median/max and ratios:
//
//	go run ./bench                  # 15 runs per case
//	go run ./bench -n 40
//	go run ./bench -baseline HEAD~3 # also the pathfinder of another revision, side by side
//
// It builds pathfinder, a hello-world Go binary and a native (no wasm) search the same way
// (CGO_ENABLED=0), makes a fake venv with real ELF libraries (gcc), and times fresh processes and
// in-process calls. NVIDIA's Python cuda.pathfinder is a column when python3 can import it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pathfinder-dev/pathfinder/bench/nativefind"
	"github.com/pathfinder-dev/pathfinder/host"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

type result struct {
	name, target string
	times        []time.Duration
	maxRSS       int64 // KiB, peak over the runs; 0 for in-process cases
	base         string
	note         string
}

func main() {
	n := flag.Int("n", 15, "runs per case")
	baseline := flag.String("baseline", "", "a git revision whose pathfinder is measured beside this one's in the find cases")
	flag.Parse()
	if err := run(*n, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(n int, baseline string) error {
	tmp, err := os.MkdirTemp("", "pathfinder-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bins := map[string]string{}
	for name, pkg := range map[string]string{"pathfinder": "./cmd/pathfinder", "native": "./bench/native", "hello": "./bench/hello"} {
		bins[name] = filepath.Join(tmp, "bin", name)
		cmd := exec.Command("go", "build", "-o", bins[name], pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	if baseline != "" {
		src := filepath.Join(tmp, "baseline-src")
		os.MkdirAll(src, 0o755)
		archive := exec.Command("sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", baseline, src)
		if out, err := archive.CombinedOutput(); err != nil {
			return fmt.Errorf("git archive %s: %v\n%s", baseline, err, out)
		}
		bins["baseline"] = filepath.Join(tmp, "bin", "baseline")
		cmd := exec.Command("go", "build", "-o", bins["baseline"], "./cmd/pathfinder")
		cmd.Dir, cmd.Env = src, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s's pathfinder: %v\n%s", baseline, err, out)
		}
	}
	libs, err := nativefind.Libraries()
	if err != nil {
		return err
	}
	// A venv with every library the CUDA 13 wheels ship in nvidia/cu13/lib.
	site := filepath.Join(tmp, "venv", "lib", "python3.12", "site-packages")
	var all, found []string
	for _, l := range libs {
		all = append(all, l.Name)
		if len(l.LinuxSonames) == 0 || !slices.Contains(l.SitePackagesLinux, "nvidia/cu13/lib") {
			continue
		}
		if err := elfso.Compile(filepath.Join(site, "nvidia/cu13/lib", l.LinuxSonames[0]), l.LinuxSonames[0], "int marker(void) { return 1; }\n"); err != nil {
			return err
		}
		found = append(found, l.Name)
	}
	cudart := filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13")
	// The same venv made of links, as uv's --link-mode=symlink makes it: each file a link into a cache.
	linkSite := filepath.Join(tmp, "uv-venv", "lib", "python3.12", "site-packages")
	if err := filepath.WalkDir(site, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(site, p)
		os.MkdirAll(filepath.Dir(filepath.Join(linkSite, rel)), 0o755)
		return os.Symlink(p, filepath.Join(linkSite, rel))
	}); err != nil {
		return err
	}
	env := []string{"PATHFINDER_SITE_PACKAGES=" + site, "HOME=" + tmp, "XDG_CONFIG_HOME=" + filepath.Join(tmp, "config"), "PATH=/usr/bin:/bin"}
	warm := "PATHFINDER_CACHE_DIR=" + filepath.Join(tmp, "warm-cache")
	run := func(bin string, env []string, extra string, args ...string) func() *exec.Cmd {
		return func() *exec.Cmd {
			cmd := exec.Command(bins[bin], args...)
			cmd.Env = append(slices.Clone(env), extra)
			return cmd
		}
	}
	pf := func(extra string, args ...string) func() *exec.Cmd { return run("pathfinder", env, extra, args...) }
	for _, args := range [][]string{{"find", "cudart"}, {"find", "nvfatbin"}, append([]string{"find"}, all...)} {
		pf(warm, args...)().Run() // warm both caches
	}
	for _, extra := range []string{"PATHFINDER_DRIVER_VERSION=580.65.06", "PATHFINDER_COMPATIBILITY=off"} {
		run("pathfinder", append(slices.Clone(env), extra), warm, "find", "cudart")().Run() // each its cache entry
	}
	linkEnv := append(slices.Clone(env), "PATHFINDER_SITE_PACKAGES="+linkSite)

	var rs []result
	add := func(cases ...spec) { rs = append(rs, measure(cases)...) }
	// A case and the baseline of its ratio are measured round-robin in one add, so that drift on a
	// shared machine weighs on both alike.
	add(procCase("hello-world Go binary", "", "", n, func() *exec.Cmd { return exec.Command(bins["hello"]) }),
		procCase("native search for cudart, fresh process (floor)", "", "", n, func() *exec.Cmd {
			cmd := exec.Command(bins["native"], "cudart")
			cmd.Env = env
			return cmd
		}),
		procCase("pathfinder version", "≤ 2× hello", "hello-world Go binary", n, pf(warm, "version")),
		procCase("find cudart, caches warm, nothing changed", "≤ 3× hello", "hello-world Go binary", n, pf(warm, "find", "cudart")),
		// The compatibility check with a driver to hold answers to, and with it off: what it costs.
		procCase("find cudart, caches warm, driver 580 pinned", "≤ 3× hello", "hello-world Go binary", n,
			run("pathfinder", append(slices.Clone(env), "PATHFINDER_DRIVER_VERSION=580.65.06"), warm, "find", "cudart")),
		procCase("find cudart, caches warm, compatibility off", "≤ 3× hello", "hello-world Go binary", n,
			run("pathfinder", append(slices.Clone(env), "PATHFINDER_COMPATIBILITY=off"), warm, "find", "cudart")))
	touch := func(p string) func() *exec.Cmd {
		mk := pf(warm, "find", "cudart")
		return func() *exec.Cmd {
			now := time.Now()
			os.Chtimes(p, now, now)
			return mk()
		}
	}
	add(procCase("find cudart, result cache invalidated (file touched)", "≤ 40 ms", "", n, touch(cudart)))

	// The venv of links, and the baseline revision beside this one, round-robin: each binary keeps a
	// warm cache of its own.
	type finder struct{ name, bin string }
	finders := []finder{{"", "pathfinder"}}
	if baseline != "" {
		finders = append(finders, finder{" [" + baseline + "]", "baseline"})
	}
	var warmCases, touchedCases []spec
	for _, fd := range finders {
		for _, s := range []struct {
			name string
			env  []string
			lib  string
		}{{"venv", env, cudart}, {"venv of links (uv)", linkEnv, cudart}} {
			cache := "PATHFINDER_CACHE_DIR=" + filepath.Join(tmp, "cache-"+fd.bin+"-"+strings.ReplaceAll(s.name, " ", "-"))
			mk := run(fd.bin, s.env, cache, "find", "cudart")
			mk().Run()
			warmCases = append(warmCases, procCase("find cudart, "+s.name+", warm"+fd.name, "", "hello-world Go binary", n, mk))
			touchedCases = append(touchedCases, procCase("find cudart, "+s.name+", invalidated"+fd.name, "", "", n, func() *exec.Cmd {
				now := time.Now()
				os.Chtimes(s.lib, now, now)
				return mk()
			}))
		}
	}
	add(warmCases...)
	add(touchedCases...)
	add(procCase("find nvfatbin (nowhere), result cache warm", "≤ 60 ms", "", n, pf(warm, "find", "nvfatbin")))
	mkNF := pf(warm, "find", "nvfatbin")
	add(procCase("find nvfatbin (nowhere), every step runs", "≤ 60 ms", "", n, func() *exec.Cmd {
		now := time.Now()
		os.Chtimes(site, now, now)
		return mkNF()
	}))
	i := 0
	add(procCase("find cudart, first run, no caches at all", "≤ 1 s", "", min(n, 5), func() *exec.Cmd {
		i++
		return pf(fmt.Sprintf("PATHFINDER_CACHE_DIR=%s/cold-%d", tmp, i), "find", "cudart")()
	}))
	findAll := pf(warm, append([]string{"find"}, all...)...)
	add(procCase(fmt.Sprintf("find all %d libraries, every step runs", len(all)), "peak RSS ≤ 64 MiB", "", min(n, 5), func() *exec.Cmd {
		now := time.Now()
		os.Chtimes(site, now, now)
		return findAll()
	}))
	findAll().Run()
	add(procCase(fmt.Sprintf("find all %d libraries, caches warm", len(all)), "peak RSS ≤ 64 MiB", "", n, findAll))
	add(procCase(fmt.Sprintf("native search for all %d, fresh process", len(all)), "", "", n, func() *exec.Cmd {
		cmd := exec.Command(bins["native"], all...)
		cmd.Env = env
		return cmd
	}))
	// cuda.pathfinder looks in the site-packages python lists (site.getsitepackages), so the venv's is
	// given to it as that list; PATHFINDER_REFERENCE, as in the integration suite, is a directory it
	// is imported from (its cuda_pathfinder/ source) where it is not installed.
	pythonEnv := append(os.Environ(), "PYTHONPATH="+os.Getenv("PATHFINDER_REFERENCE"))
	probe := exec.Command("python3", "-c", "import cuda.pathfinder")
	probe.Env = pythonEnv
	if err := probe.Run(); err == nil {
		ask := "import site; site.getsitepackages, site.ENABLE_USER_SITE = (lambda: [" + fmt.Sprintf("%q", site) + "]), False\n" +
			"from cuda.pathfinder import load_nvidia_dynamic_lib as l; print(l('cudart').abs_path)"
		add(procCase("python cuda.pathfinder load_nvidia_dynamic_lib", "", "hello-world Go binary", n, func() *exec.Cmd {
			cmd := exec.Command("python3", "-c", ask)
			cmd.Env = pythonEnv
			return cmd
		}))
	} else {
		rs = append(rs, result{name: "python cuda.pathfinder", note: "skipped: python3 cannot import cuda.pathfinder (install it, or set PATHFINDER_REFERENCE)"})
	}

	// In process, with the warm caches.
	for _, kv := range append(env, warm) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	ctx := context.Background()
	f, err := host.New(host.Options{})
	if err != nil {
		return err
	}
	if _, err := f.Find(ctx, "cudart"); err != nil {
		return err
	}
	add(loopCase("in-process Find, repeated", "≤ 1 µs", "", n, 100000, func() { f.Find(ctx, "cudart") }))
	add(loopCase("in-process Load, repeated", "≤ 1 µs", "", n, 100000, func() { f.Load(ctx, "cudart") }))
	allWarm := fmt.Sprintf("in-process find of all %d, new Finder, warm", len(all))
	sites := []string{site}
	add(loopCase(allWarm, "≤ 3× native", "in-process native search of all (floor)", n, 3, func() {
		g, _ := host.New(host.Options{})
		for _, name := range all {
			g.Find(ctx, name)
		}
		g.Close()
	}),
		loopCase("in-process native search of all (floor)", "", "", n, 20, func() {
			for _, l := range libs {
				nativefind.Find(l, sites)
			}
		}))
	add(loopCase("in-process search, not remembered (Explain)", "", "", n, 20, func() { f.Explain(ctx, search.DynamicLib, "cudart") }))

	fmt.Printf("pathfinder on a fake venv (%d of %d libraries present); %d runs per case; %s, %d CPUs\n\n", len(found), len(all), n, runtime.Version(), runtime.NumCPU())
	fmt.Printf("%-58s %10s %10s %10s %9s %10s  %s\n", "case", "min", "median", "max", "ratio", "peak RSS", "target")
	byName := map[string]time.Duration{}
	for _, r := range rs {
		if r.note == "" {
			byName[r.name] = median(r.times)
		}
	}
	for _, r := range rs {
		if r.note != "" {
			fmt.Printf("%-58s %s\n", r.name, r.note)
			continue
		}
		t := slices.Clone(r.times)
		slices.Sort(t)
		ratio := ""
		if b, ok := byName[r.base]; ok && b > 0 {
			ratio = fmt.Sprintf("%.1f×", float64(median(t))/float64(b))
		}
		rss := "-"
		if r.maxRSS > 0 {
			rss = fmt.Sprintf("%.1f MiB", float64(r.maxRSS)/1024)
		}
		fmt.Printf("%-58s %10s %10s %10s %9s %10s  %s\n", r.name, round(t[0]), round(median(t)), round(t[len(t)-1]), ratio, rss, r.target)
	}
	return nil
}

// spec is a case to measure: n samples of run, each a duration and a peak RSS in KiB (0 in process).
type spec struct {
	result
	n   int
	run func() (time.Duration, int64, error)
}

// measure takes the samples of cases round-robin (a, b, a, b, ...); a case that fails is reported
// as failed and left out of the rounds after.
func measure(cases []spec) []result {
	failed := make([]bool, len(cases))
	for round := range cases[0].n {
		for i := range cases {
			c := &cases[i]
			if failed[i] || round >= c.n {
				continue
			}
			d, rss, err := c.run()
			if err != nil {
				c.note, failed[i] = "failed: "+err.Error(), true
				continue
			}
			c.times = append(c.times, d)
			c.maxRSS = max(c.maxRSS, rss)
		}
	}
	out := make([]result, len(cases))
	for i, c := range cases {
		out[i] = c.result
	}
	return out
}

// procCase runs a fresh process per sample.
func procCase(name, target, base string, n int, mk func() *exec.Cmd) spec {
	return spec{result{name: name, target: target, base: base}, n, func() (time.Duration, int64, error) {
		cmd := mk()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: something not found, a valid answer
			return 0, 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return d, peakRSS(cmd.ProcessState), nil
	}}
}

// loopCase times a batch of iters calls per sample and records the per-call time.
func loopCase(name, target, base string, n, iters int, fn func()) spec {
	return spec{result{name: name, target: target, base: base}, n, func() (time.Duration, int64, error) {
		start := time.Now()
		for range iters {
			fn()
		}
		return time.Since(start) / time.Duration(iters), 0, nil
	}}
}

func median(t []time.Duration) time.Duration {
	s := slices.Clone(t)
	slices.Sort(s)
	return s[len(s)/2]
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Nanosecond)
}
