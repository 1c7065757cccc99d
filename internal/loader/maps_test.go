package loader

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseMaps(t *testing.T) {
	listing := `55d0c4a00000-55d0c4a02000 r--p 00000000 fd:01 1050 /usr/bin/hold
7f2a10000000-7f2a10021000 rw-p 00000000 00:00 0 
7f2a1c000000-7f2a1c2a0000 r-xp 00004000 fd:01 2231 /venv/nvidia/cuda_runtime/lib/libcudart.so.12
7f2a1d000000-7f2a1d001000 r--p 00000000 fd:01 77 /tmp/a dir/libnvrtc.so.12 (deleted)
7ffd5e5a0000-7ffd5e5c1000 rw-p 00000000 00:00 0                          [stack]
not a mapping
zz-10 r--p 00000000 fd:01 5 /bad/address
`
	want := []Mapping{
		{Start: 0x55d0c4a00000, End: 0x55d0c4a02000, File: "fd:01 1050", Path: "/usr/bin/hold"},
		{Start: 0x7f2a10000000, End: 0x7f2a10021000},
		{Start: 0x7f2a1c000000, End: 0x7f2a1c2a0000, File: "fd:01 2231", Path: "/venv/nvidia/cuda_runtime/lib/libcudart.so.12"},
		{Start: 0x7f2a1d000000, End: 0x7f2a1d001000, File: "fd:01 77", Path: "/tmp/a dir/libnvrtc.so.12"},
		{Start: 0x7ffd5e5a0000, End: 0x7ffd5e5c1000},
	}
	if got := ParseMaps(listing); !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseMaps:\n got %+v\nwant %+v", got, want)
	}
}

// FuzzParseMaps: any listing reads without a panic, and every mapping it returns names a file
// exactly when it has one's numbers, and a path only then.
func FuzzParseMaps(f *testing.F) {
	f.Add("7f2a1c000000-7f2a1c2a0000 r-xp 00004000 fd:01 2231 /lib/libcudart.so.12\n")
	f.Add("7ffd5e5a0000-7ffd5e5c1000 rw-p 00000000 00:00 0 [stack]\n")
	f.Fuzz(func(t *testing.T, listing string) {
		for _, m := range ParseMaps(listing) {
			if m.Path != "" && (m.File == "" || !strings.HasPrefix(m.Path, "/")) {
				t.Fatalf("%+v: a path without a file, or not absolute", m)
			}
		}
	})
}
