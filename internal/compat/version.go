package compat

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a CUDA version: "12.4", or "13" when only the major is known.
type Version struct {
	Major, Minor int
	HasMinor     bool
}

// ParseVersion reads "12", "12.4" or "12.4.1" (the patch is dropped); anything else is an error.
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(s, ".")
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if i >= len(n) || err != nil || p == "" || p[0] < '0' || p[0] > '9' || len(p) > 4 {
			return Version{}, fmt.Errorf("%q is not a CUDA version like 12.4", s)
		}
		n[i] = v
	}
	return Version{Major: n[0], Minor: n[1], HasMinor: len(parts) > 1}, nil
}

// String is "12.4", or "12" when only the major is known.
func (v Version) String() string {
	if !v.HasMinor {
		return strconv.Itoa(v.Major)
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// within reports whether v is max or older: a major-only v is within only an older major, since its
// minor may be newer than max's.
func (v Version) within(max Version) bool {
	return v.Major < max.Major || v.Major == max.Major && v.HasMinor && v.Minor <= max.Minor
}
