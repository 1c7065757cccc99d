package cudaversion

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// Bounds on what is read of a conda prefix: the package records likeliest to list the file (its
// library's name in theirs first), each no larger than a package of many thousand files makes.
const (
	maxCondaRecords = 256
	maxCondaRecord  = 64 << 20
)

// fromConda dates a by the conda package that installed it: the conda-meta/*.json whose "files"
// list it, by its "cuda-version" dependency, else as a wheel is dated (packageCUDA). The prefix is
// the one below the descriptor's conda directory a lies in (lib, Library/bin, targets/…/include).
func fromConda(a Artifact, rec *observe.Recorder) (Answer, string) {
	return below(a, a.Library.CondaDirs(a.Platform), "conda directories", func(prefix string, rels []string) (Answer, string) {
		return fromCondaPrefix(a, prefix, rels, rec)
	})
}

// fromCondaPrefix looks in prefix for what installed a's files rels.
func fromCondaPrefix(a Artifact, prefix string, rels []string, rec *observe.Recorder) (Answer, string) {
	meta := filepath.Join(prefix, "conda-meta")
	entries, err := rec.ReadDir(meta)
	if err != nil {
		return Answer{}, meta + ": " + why(err)
	}
	name := strings.ToLower(a.Library.Name)
	records := likeliest(entries, ".json", maxCondaRecords, func(r string) int {
		if strings.Contains(strings.ToLower(r), name) {
			return 0
		}
		return 1
	})
	for _, r := range records {
		p := filepath.Join(meta, r)
		data, whole, err := readFile(rec, p, maxCondaRecord)
		if err != nil || !whole {
			continue
		}
		var pkg struct {
			Name, Version  string
			Depends, Files []string
		}
		// A cheap look for the quoted path first: most records do not list it, and decoding a
		// large one costs far more than searching it.
		rel, ok := listed(rels, func(rel string) bool { return bytes.Contains(data, []byte(`"`+rel+`"`)) })
		if !ok || json.Unmarshal(data, &pkg) != nil {
			continue
		}
		if rel, ok = listed(rels, func(rel string) bool { return slices.Contains(pkg.Files, rel) }); !ok {
			continue
		}
		cuda := condaCUDA(pkg.Depends)
		switch {
		case pkg.Name == "cudatoolkit": // CUDA 11's one package for the whole toolkit: its version is the CUDA's
			cuda, _ = majorMinor(pkg.Version)
		case cuda != "":
			cuda = withMinor(a.Library, cuda, pkg.Version)
		default:
			cuda = packageCUDA(a, pkg.Name, pkg.Version, rel)
		}
		if cuda == "" {
			return Answer{}, fmt.Sprintf("%s: %s %s lists %s but names no CUDA", p, pkg.Name, pkg.Version, rel)
		}
		return Answer{CUDA: cuda, Version: pkg.Version, Detail: fmt.Sprintf("%s: %s %s", p, pkg.Name, pkg.Version)}, ""
	}
	return Answer{}, fmt.Sprintf("no record of the %d likeliest in %s lists %s", len(records), meta, rels[0])
}

// condaCUDA is the CUDA that a package's "cuda-version" dependencies allow, the most precise where
// there are several (cuDNN's ">=12,<13.0a0" and ">=12.6,<13" allow 12); "" where they disagree.
func condaCUDA(depends []string) string {
	cuda := ""
	for _, d := range depends {
		f := strings.Fields(d)
		if len(f) < 2 || f[0] != "cuda-version" {
			continue
		}
		switch v := cudaVersionSpec(strings.Join(f[1:], "")); {
		case v == "" || strings.HasPrefix(cuda+".", v+"."):
		case cuda == "" || strings.HasPrefix(v, cuda+"."):
			cuda = v
		default:
			return ""
		}
	}
	return cuda
}

// cudaVersionSpec reads a constraint on the cuda-version package as conda packages state it:
// ">=12.4,<12.5.0a0" (NVIDIA's and conda-forge's packages of one release) is 12.4; ">=12,<13.0a0"
// (cuDNN, built for a whole major) is 12, as is ">=12.6,<13"; "12.4.*" and "12.4" are 12.4.
// Anything else ("" too) allows more than one release, or is not understood.
func cudaVersionSpec(spec string) string {
	lo, hi, ok := strings.Cut(spec, ",")
	if !ok {
		ns, ok := numbers(strings.TrimSuffix(strings.TrimPrefix(spec, "=="), ".*"))
		switch {
		case !ok || len(ns) > 2:
			return ""
		case len(ns) == 1:
			return fmt.Sprint(ns[0])
		}
		return fmt.Sprintf("%d.%d", ns[0], ns[1])
	}
	if !strings.HasPrefix(lo, ">=") || !strings.HasPrefix(hi, "<") || strings.HasPrefix(hi, "<=") {
		return ""
	}
	l, ok1 := numbers(lo[2:])
	h, ok2 := numbers(strings.TrimSuffix(strings.TrimSuffix(hi[1:], "a0"), ".0"))
	if !ok1 || !ok2 || len(l) > 3 || len(h) > 2 {
		return ""
	}
	h = append(h, 0)
	switch {
	case len(l) >= 2 && h[0] == l[0] && h[1] == l[1]+1:
		return fmt.Sprintf("%d.%d", l[0], l[1])
	case h[0] == l[0]+1 && h[1] == 0:
		return fmt.Sprint(l[0])
	}
	return ""
}
