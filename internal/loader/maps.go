package loader

import (
	"strconv"
	"strings"
)

// Mapping is one line of a /proc/PID/maps listing, "start-end perms offset major:minor inode path":
// an address range and the file mapped there.
type Mapping struct {
	Start, End uint64
	// File is the mapped file's "major:minor inode", which tells two copies of a library from two
	// names of one file; "" for an anonymous mapping.
	File string
	// Path is the file's path (it may hold spaces), without the " (deleted)" of a file removed since;
	// "" for an anonymous mapping and a pseudo-file such as [heap].
	Path string
}

// ParseMaps reads a /proc/PID/maps listing, in its order; a line it cannot read is left out.
func ParseMaps(listing string) []Mapping {
	var out []Mapping
	for line := range strings.Lines(listing) {
		line = strings.TrimSuffix(line, "\n")
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		m := Mapping{Start: start, End: end}
		if f[4] != "0" {
			m.File = f[3] + " " + f[4]
			if i := strings.Index(line, " /"); i >= 0 {
				m.Path = strings.TrimSuffix(line[i+1:], " (deleted)")
			}
		}
		out = append(out, m)
	}
	return out
}
