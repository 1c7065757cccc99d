package cudaversion

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// Bounds on what is read of a site-packages directory: the RECORDs of its likeliest dist-infos (a
// file under nvidia/ is listed by an nvidia_* one), each no larger than torch's few MiB, and the
// head of a METADATA, where its Name and Version are.
const (
	maxRecords   = 64
	maxRecord    = 32 << 20
	metadataHead = 64 << 10
)

// fromWheel dates a by the wheel that installed it: the *.dist-info in a's site-packages directory
// whose RECORD lists it, by METADATA's Name and Version. The site-packages directory is the one
// below the descriptor's site-packages directory a lies in (nvidia/cu13/lib): a file in no such
// place was not installed by a wheel the descriptor knows, and listing every directory above
// /usr/lib/x86_64-linux-gnu would tie the answer to every package installed there.
func fromWheel(a Artifact, rec *observe.Recorder) (Answer, string) {
	return below(a, a.Library.SitePackagesDirs(a.Platform), "site-packages directories", func(site string, rels []string) (Answer, string) {
		return fromSitePackages(a, site, rels, rec)
	})
}

// fromSitePackages looks in site for what installed a's files rels.
func fromSitePackages(a Artifact, site string, rels []string, rec *observe.Recorder) (Answer, string) {
	entries, err := rec.ReadDir(site)
	if err != nil {
		return Answer{}, site + ": " + why(err)
	}
	infos := likeliest(entries, ".dist-info", maxRecords, func(info string) int { return likelihood(info, rels[0]) })
	for _, info := range infos {
		data, whole, err := readFile(rec, filepath.Join(site, info, "RECORD"), maxRecord)
		if err != nil || !whole {
			continue
		}
		rel, ok := listed(rels, func(rel string) bool { return bytes.Contains(data, []byte(rel)) && recordLists(data, rel) })
		if !ok {
			continue
		}
		name, version, err := metadata(filepath.Join(site, info, "METADATA"), rec)
		if err != nil {
			return Answer{}, fmt.Sprintf("%s lists %s, but its METADATA: %v", info, rel, err)
		}
		cuda := packageCUDA(a, name, version, rel)
		if cuda == "" {
			return Answer{}, fmt.Sprintf("%s: %s %s names no CUDA major", filepath.Join(site, info), name, version)
		}
		return Answer{CUDA: cuda, Version: version, Detail: fmt.Sprintf("%s: %s %s", filepath.Join(site, info), name, version)}, ""
	}
	return Answer{}, fmt.Sprintf("no RECORD of the %d likeliest *.dist-info in %s lists %s", len(infos), site, rels[0])
}

// likelihood orders dist-infos so that a site-packages of hundreds reads one or two RECORDs: first
// those whose name holds the package directory rel lies in (nvidia/cuda_runtime/lib:
// nvidia_cuda_runtime_cu12-12.4.127.dist-info), then NVIDIA's (nvidia_*), then the rest.
func likelihood(info, rel string) int {
	name := strings.ToLower(info)
	segs := strings.Split(rel, "/")
	pkg := segs[0]
	if pkg == "nvidia" && len(segs) > 2 {
		pkg = segs[1]
	}
	switch {
	case strings.Contains(name, strings.ToLower(pkg)):
		return 0
	case strings.HasPrefix(name, "nvidia"):
		return 1
	}
	return 2
}

// recordLists reports whether a RECORD (CSV: path, hash, size; paths relative to site-packages,
// quoted where they must be) lists rel.
func recordLists(data []byte, rel string) bool {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord, r.LazyQuotes, r.ReuseRecord = -1, true, true
	for {
		row, err := r.Read()
		if err != nil {
			return false
		}
		if len(row) > 0 && path.Clean(row[0]) == rel {
			return true
		}
	}
}

// metadata reads the Name and Version headers of a METADATA file.
func metadata(p string, rec *observe.Recorder) (name, version string, err error) {
	data, _, err := readFile(rec, p, metadataHead)
	if err != nil {
		return "", "", fmt.Errorf("%s", why(err))
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() && sc.Text() != "" { // the headers end at the first empty line
		k, v, _ := strings.Cut(sc.Text(), ":")
		switch strings.ToLower(k) {
		case "name":
			name = strings.TrimSpace(v)
		case "version":
			version = strings.TrimSpace(v)
		}
	}
	if name == "" || version == "" {
		return "", "", fmt.Errorf("no Name and Version in its first %d KiB", metadataHead>>10)
	}
	return name, version, nil
}

// packageCUDA is the CUDA of a package that installed a's file rel, by what it is called: the
// major of its name's -cuNN (nvidia-cuda-runtime-cu12, nvidia-cudnn-cu12), else of the cuNN
// directory rel lies in (CUDA 13's nvidia-cuda-runtime installs nvidia/cu13/lib), else of the
// catalog's mapping of the file name; and the minor where the descriptor says the library's
// version is its toolkit's (nvidia-cuda-runtime-cu12 12.4.127 is CUDA 12.4).
func packageCUDA(a Artifact, name, version, rel string) string {
	major := cuMajor(strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(name)), "-")
	for _, seg := range strings.Split(path.Dir(rel), "/") {
		if major == "" {
			major = cuMajor(seg, "")
		}
	}
	if major == "" {
		major = a.Library.CUDAMajors[filepath.Base(a.Path)]
	}
	if major == "" {
		return ""
	}
	return withMinor(a.Library, major, version)
}

// cuMajor is 12 of s when s ends in sep+"cu12" (with sep "": when s is "cu12"), else "".
func cuMajor(s, sep string) string {
	i := strings.LastIndex(s, sep+"cu")
	if i < 0 || (sep == "" && i != 0) {
		return ""
	}
	if m := s[i+len(sep)+2:]; IsMajor(m) {
		return m
	}
	return ""
}
