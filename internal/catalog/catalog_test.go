package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
)

func TestBuiltinPack(t *testing.T) {
	c, err := New(Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[abi.Kind]int{abi.KindDynamicLib: 50, abi.KindHeaderDir: 31, abi.KindBinary: 16, abi.KindStaticLib: 1, abi.KindBitcode: 3}
	for kind, want := range counts {
		if got := len(c.Names(kind)); got != want {
			t.Errorf("%s: %d descriptors, want %d", kind, got, want)
		}
	}
	linux := abi.Platform{OS: "linux", Arch: "amd64"}
	windows := abi.Platform{OS: "windows", Arch: "amd64"}
	winArm := abi.Platform{OS: "windows", Arch: "arm64"}
	tests := []struct {
		kind    abi.Kind
		name    string
		plat    abi.Platform
		files   string
		avail   bool
		anchors string
	}{
		{abi.KindDynamicLib, "cudart", linux, "libcudart.so.13 libcudart.so.12", true, "lib64 lib"},
		{abi.KindDynamicLib, "nvvm", linux, "libnvvm.so.4 libnvvm.so", true, "nvvm/lib64"},
		{abi.KindDynamicLib, "cufftMp", linux, "libcufftMp.so.12 libcufftMp.so.11", true, "lib64 lib"},
		{abi.KindDynamicLib, "cudart", windows, "cudart64_13.dll cudart64_12.dll", true, "bin/x64 bin"},
		{abi.KindDynamicLib, "nvvm", windows, "nvvm70.dll nvvm64_40_0.dll nvvm64.dll", true, "nvvm/bin/x64 nvvm/bin"},
		{abi.KindDynamicLib, "nvvm", winArm, "nvvm70.dll nvvm64_40_0.dll nvvm64.dll", true, "nvvm/bin/arm64 nvvm/bin"},
		{abi.KindDynamicLib, "cufile", windows, "", false, ""},
		{abi.KindDynamicLib, "cudart", winArm, "cudart64_13.dll cudart64_12.dll", true, "bin/arm64 bin"},
		{abi.KindDynamicLib, "cupti", winArm, strings.Join(dynLib(c, "cupti").WindowsDLLs, " "), true, "extras/CUPTI/lib64 bin/arm64 bin"},
		{abi.KindDynamicLib, "cudla", winArm, "cudla.dll", true, "bin/arm64"},
		{abi.KindDynamicLib, "cudla", windows, "", false, ""},
		{abi.KindDynamicLib, "cudla", linux, "libcudla.so.1", true, "lib64 lib"},
		{abi.KindDynamicLib, "cudss", linux, "libcudss.so.1 libcudss.so.0", true, "lib64 lib"},
		{abi.KindDynamicLib, "cudss", winArm, "cudss64_1.dll cudss64_0.dll", true, "bin/arm64 bin"},
		{abi.KindStaticLib, "cudadevrt", windows, "cudadevrt.lib", true, "lib/x64"},
		{abi.KindStaticLib, "cudadevrt", winArm, "cudadevrt.lib", true, "lib/arm64"},
		{abi.KindDynamicLib, "cudnn", linux, "libcudnn.so.9", true, "lib64 lib"},
		{abi.KindHeaderDir, "cudart", linux, "cuda_runtime.h", true, "include targets/x86_64-linux/include"},
		{abi.KindHeaderDir, "cccl", linux, "cuda/std/version", true, "include/cccl include targets/x86_64-linux/include/cccl targets/x86_64-linux/include"},
		{abi.KindBinary, "nvcc", windows, "nvcc.exe", true, "bin/x64 bin/x86_64 bin"},
		{abi.KindBinary, "ptxas", linux, "ptxas", true, "bin"},
		{abi.KindStaticLib, "cudadevrt", linux, "libcudadevrt.a", true, "lib64 lib"},
		{abi.KindBitcode, "device", linux, "libdevice.10.bc", true, "nvvm/libdevice"},
		{abi.KindBitcode, "nccl_device", windows, "", false, ""},
	}
	for _, tt := range tests {
		e, ok := c.Lookup(tt.kind, tt.name)
		if !ok {
			t.Errorf("%s %s missing", tt.kind, tt.name)
			continue
		}
		if got := strings.Join(e.FileNames(tt.plat), " "); got != tt.files {
			t.Errorf("%s %s on %s: files %q, want %q", tt.kind, tt.name, tt.plat, got, tt.files)
		}
		if e.AvailableOn(tt.plat) != tt.avail {
			t.Errorf("%s %s available on %s = %v", tt.kind, tt.name, tt.plat, !tt.avail)
		}
		if got := strings.Join(e.AnchorDirs(tt.plat), " "); tt.avail && got != tt.anchors {
			t.Errorf("%s %s anchors %q, want %q", tt.kind, tt.name, got, tt.anchors)
		}
	}
	cublas, _ := c.Lookup(abi.KindDynamicLib, "cublas")
	if strings.Join(cublas.Dependencies, ",") != "cublasLt" {
		t.Errorf("cublas dependencies %v", cublas.Dependencies)
	}
	if cudss := dynLib(c, "cudss"); strings.Join(cudss.Dependencies, ",") != "cublas,cublasLt" || strings.Join(cudss.OptionalDependencies, ",") != "nvrtc" {
		t.Errorf("cudss %+v", cudss.Descriptor)
	}
	// Windows wheels: CUDA 13 keeps each architecture apart; the CUDA 12 component wheels are x64 only.
	for _, lib := range []string{"cudart", "nvrtc", "cublas", "nvvm", "cupti"} {
		x64, arm := dynLib(c, lib).SitePackagesDirs(windows), dynLib(c, lib).SitePackagesDirs(winArm)
		if len(x64) != 2 || x64[0] != "nvidia/cu13/bin/x86_64" || !strings.HasPrefix(x64[1], "nvidia/cu") || strings.Join(arm, " ") != "nvidia/cu13/bin/arm64" {
			t.Errorf("%s site-packages: x64 %q, arm64 %q", lib, x64, arm)
		}
	}
	cudnn, _ := c.Lookup(abi.KindDynamicLib, "cudnn")
	if strings.Join(cudnn.InstallRootEnvVars, ",") != "CUDNN_PATH" || strings.Join(cudnn.OptionalDependencies, ",") != "nvrtc" {
		t.Errorf("cudnn %+v", cudnn.Descriptor)
	}
}

// TestBuiltinPack_canaries holds the pack to cuda.pathfinder's use of the CTK-root canary: every binary
// utility (find_nvidia_binary_utility's fallback since 1.6.0), and the header sets that ship with the
// toolkit (use_ctk_root_canary is true for each "ctk" header descriptor and false for each "other").
func TestBuiltinPack_canaries(t *testing.T) {
	c, err := New(Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []abi.Kind{abi.KindBinary, abi.KindHeaderDir} {
		for _, name := range c.Names(kind) {
			e, _ := c.Lookup(kind, name)
			var want []string
			if kind == abi.KindBinary || e.PackagedWith == "ctk" {
				want = []string{"cudart"}
			}
			if !slices.Equal(e.CanaryAnchors, want) {
				t.Errorf("%s %s: canaries %q, want %q", kind, name, e.CanaryAnchors, want)
			}
		}
	}
}

// TestBuiltinPack_cudaMajors holds the builtin pack's dating facts (their sources are beside them in
// the pack): the majors of names that belong to one CUDA, none for names of several.
func TestBuiltinPack_cudaMajors(t *testing.T) {
	c, err := New(Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ lib, file, major string }{
		{"cudart", "libcudart.so.12", "12"}, {"cudart", "cudart64_13.dll", "13"},
		{"cufft", "libcufft.so.11", "12"}, {"cufft", "libcufft.so.12", "13"}, {"cufft", "cufft64_12.dll", "13"},
		{"cusolver", "libcusolver.so.12", "13"}, {"cusolver", "libcusolver.so.11", ""}, {"cusolver", "cusolver64_11.dll", ""},
		{"cusparse", "libcusparse.so.12", ""}, {"curand", "libcurand.so.10", ""}, {"nvvm", "libnvvm.so.4", ""},
		{"nvrtc", "nvrtc64_120_0.dll", "12"}, {"nppc", "libnppc.so.13", "13"}, {"cupti", "cupti64_2024.3.2.dll", "12"},
		{"cupti", "cupti64_2023.3.1.dll", ""}, {"cudnn", "libcudnn.so.9", ""}, {"cufile", "libcufile.so.0", ""},
	} {
		if got := dynLib(c, tt.lib).CUDAMajors[tt.file]; got != tt.major {
			t.Errorf("%s: %s is CUDA %q, want %q", tt.lib, tt.file, got, tt.major)
		}
	}
	for lib, want := range map[string]bool{"cudart": true, "nvrtc": true, "nvJitLink": true, "nvfatbin": true, "cupti": true, "cublas": false, "cufft": false, "nvjpeg": false, "nvvm": false} {
		if got := dynLib(c, lib).VersionedAsCUDA; got != want {
			t.Errorf("%s: versioned_as_cuda %v, want %v", lib, got, want)
		}
	}
}

// dynLib returns the builtin pack's dynamic library name.
func dynLib(c *Catalog, name string) *Entry {
	l, _ := c.Lookup(abi.KindDynamicLib, name)
	return l
}

func TestNew_Errors(t *testing.T) {
	tests := []struct {
		name  string
		packs []string
		want  string
	}{
		{"unknown key", []string{"[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_sonames = [\"libx.so.1\"]\nsonames = []\n"}, `p0.toml:5:1: unknown key "library.sonames"`},
		{"syntax", []string{"[[library]\n"}, "pack p0.toml:1:10: expected end of table array name"},
		{"no name", []string{"[[library]]\npackaged_with = \"ctk\"\n"}, "p0.toml:1: [[library]] without a name"},
		{"bad packaged_with", []string{"[[library]]\nname = \"x\"\npackaged_with = \"nvidia\"\nlinux_sonames = [\"a\"]\n"}, `packaged_with is "nvidia"`},
		{"bad Windows arch", []string{"[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\nwindows_dlls = [\"x.dll\"]\nsupported_windows_arch = [\"arm64\", \"amd64\"]\n"}, `p0.toml:1: library "x": supported_windows_arch holds "amd64", expected "x64" or "arm64"`},
		{"no files", []string{"[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\n"}, `"x" declares no linux_sonames`},
		{"header with sonames", []string{"[[header]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_files = [\"x.h\"]\nlinux_sonames = [\"libx.so\"]\n"}, "are for [[library]] tables"},
		{"unknown dependency", []string{"[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_sonames = [\"a\"]\ndependencies = [\"y\"]\n"}, `"x" depends on unknown library "y"`},
		{"cycle", []string{"[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_sonames = [\"a\"]\ndependencies = [\"y\"]\n[[library]]\nname = \"y\"\npackaged_with = \"ctk\"\nlinux_sonames = [\"b\"]\ndependencies = [\"x\"]\n"}, "dependency cycle: x -> y -> x"},
		{"cuda_majors of a name not declared", []string{"[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_sonames = [\"libx.so.1\"]\ncuda_majors = { \"libx.so.1\" = \"12\", \"libx.so.2\" = \"13\" }\n"}, `p0.toml:1: library "x": cuda_majors names "libx.so.2", which is not one of its file names`},
		{"cuda_majors of no major", []string{"\n[[header]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_files = [\"x.h\"]\ncuda_majors = { \"x.h\" = \"12.4\" }\n"}, `p0.toml:2: header "x": cuda_majors gives "12.4" for "x.h", expected a CUDA major such as "12"`},
		{"NUL in a name", []string{"[[header]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_files = [\"x.h\"]\nconda_rel_dirs_linux = [\"inc\\u0000lude\"]\n"}, `p0.toml:1: header "x": conda_rel_dirs_linux holds a NUL byte`},
		{"defined twice", []string{"[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_sonames = [\"a\"]\n", "\n[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_sonames = [\"b\"]\n"}, `library "x" is defined by both p0.toml:1 and p1.toml:2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var packs []Pack
			for i, p := range tt.packs {
				packs = append(packs, Pack{Name: "p" + string(rune('0'+i)) + ".toml", Data: []byte(p)})
			}
			_, err := New(packs...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want %q", err, tt.want)
			}
		})
	}
	// replaces = true overrides.
	c, err := New(Pack{Name: "a", Data: []byte("[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_sonames = [\"a\"]\n")},
		Pack{Name: "b", Data: []byte("[[library]]\nname = \"x\"\nreplaces = true\npackaged_with = \"other\"\nlinux_sonames = [\"b\"]\n")})
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := c.Lookup(abi.KindDynamicLib, "x"); e.PackagedWith != "other" || e.Pack != "b:1" {
		t.Fatalf("replaced entry %+v", e)
	}
}

// TestEntry_Category: a pack says "third-party", or "other" as cuda.pathfinder's catalog does; both
// are listed as third-party.
func TestEntry_Category(t *testing.T) {
	for _, with := range []string{"third-party", "other", "ctk", "driver"} {
		c, err := New(Pack{Name: "a", Data: []byte("[[library]]\nname = \"x\"\npackaged_with = \"" + with + "\"\nlinux_sonames = [\"a\"]\n")})
		if err != nil {
			t.Fatalf("packaged_with = %q: %v", with, err)
		}
		want := with
		if with == "other" {
			want = "third-party"
		}
		if e, _ := c.Lookup(abi.KindDynamicLib, "x"); e.Category() != want {
			t.Errorf("packaged_with = %q: category %q, want %q", with, e.Category(), want)
		}
	}
	if _, err := New(Pack{Name: "a", Data: []byte("[[library]]\nname = \"x\"\npackaged_with = \"thirdparty\"\nlinux_sonames = [\"a\"]\n")}); err == nil ||
		!strings.Contains(err.Error(), `packaged_with is "thirdparty", expected "ctk", "third-party" (or cuda.pathfinder's "other") or "driver"`) {
		t.Errorf("packaged_with = \"thirdparty\": %v", err)
	}
}

func FuzzNew(f *testing.F) {
	f.Add(builtin.NVIDIAPack())
	f.Add([]byte("[[library]]\nname = \"x\"\npackaged_with = \"ctk\"\nlinux_sonames = [\"a\"]\ndependencies = [\"x\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := New(Pack{Name: "fuzz", Data: data})
		if err != nil {
			if strings.HasPrefix(err.Error(), "pathfinder: ") {
				t.Fatalf("error with the program's prefix, which the command adds: %v", err)
			}
			return
		}
		for _, k := range Kinds {
			for _, n := range c.Names(k.Kind) {
				if _, ok := c.Lookup(k.Kind, n); !ok {
					t.Fatalf("listed %s %q not found", k.Kind, n)
				}
			}
		}
	})
}

// TestCached reads a pack through the cache: the builtin pack's libraries under another name, as a
// vendor's pack (the builtin pack alone is in the binary, TestBuiltinCatalog).
func TestCached(t *testing.T) {
	dir := t.TempDir()
	pack := Pack{Name: "vendor.toml", Data: builtin.NVIDIAPack()}
	want, err := New(pack)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the first writes the cache, the second reads it
		got, err := Cached(dir, pack)
		if err != nil {
			t.Fatal(err)
		}
		if got.Hash() != want.Hash() {
			t.Fatalf("run %d: hash %s, want %s", i, got.Hash(), want.Hash())
		}
		for _, k := range Kinds {
			if strings.Join(got.Names(k.Kind), ",") != strings.Join(want.Names(k.Kind), ",") {
				t.Fatalf("run %d: %s names differ", i, k.Kind)
			}
			for _, n := range want.Names(k.Kind) {
				a, _ := got.Lookup(k.Kind, n)
				b, _ := want.Lookup(k.Kind, n)
				if fmt.Sprint(*a) != fmt.Sprint(*b) {
					t.Fatalf("run %d: %s %s: %+v, want %+v", i, k.Kind, n, a, b)
				}
			}
		}
	}
	// A corrupt cache file is ignored, and a bad pack is still an error.
	files, _ := filepath.Glob(filepath.Join(dir, "catalog-*.bin"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	os.WriteFile(files[0], []byte("{"), 0o644)
	if c, err := Cached(dir, pack); err != nil || len(c.Names(abi.KindDynamicLib)) != 50 {
		t.Fatalf("after corruption: %v", err)
	}
	if _, err := Cached(dir, Pack{Name: "bad", Data: []byte("[[library]]\n")}); err == nil {
		t.Fatal("a bad pack was accepted through the cache")
	}
}

// FuzzDecodeEntries: any bytes decode to an error or to entries that encode back to the same bytes.
func FuzzDecodeEntries(f *testing.F) {
	c, _ := New(Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()})
	entries := []*Entry{dynLib(c, "cudart")} // its cuda_majors, a map
	for _, n := range c.Names(abi.KindHeaderDir)[:3] {
		e, _ := c.Lookup(abi.KindHeaderDir, n)
		entries = append(entries, e)
	}
	f.Add(encodeEntries("h", entries))
	f.Add(encodeEntries("h", nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeEntries(data, "h")
		if err != nil {
			return
		}
		// The bytes may differ (a varint has more than one spelling); the entries may not.
		back, err := decodeEntries(encodeEntries("h", got), "h")
		values := func(es []*Entry) (s string) {
			for _, e := range es {
				s += fmt.Sprintf("%+v\n", *e)
			}
			return s
		}
		if err != nil || values(back) != values(got) {
			t.Fatalf("entries do not survive a round trip: %v\n%s", err, values(got))
		}
	})
}

func TestDecodeEntries_otherLayout(t *testing.T) {
	data := encodeEntries("h", []*Entry{{Kind: abi.KindDynamicLib}})
	if _, err := decodeEntries(data, "other-hash"); err == nil {
		t.Error("a file for other packs was read")
	}
	saved := entryLayout
	entryLayout = func() ([]reflect.StructField, string) {
		fields, layout := saved()
		return fields, layout + "NewField:string;"
	}
	defer func() { entryLayout = saved }()
	if _, err := decodeEntries(data, "h"); err == nil {
		t.Error("a file written for another layout of Entry was read")
	}
}

// TestPackDescriptor_wire: the pack's TOML type and the wire type are two types of the same fields
// (a conversion joins them): the wire's carries no TOML keys, and each field the wire carries has
// one name in both, so a pack's key is the request's.
func TestPackDescriptor_wire(t *testing.T) {
	wire, pack := reflect.TypeFor[abi.Descriptor](), reflect.TypeFor[packDescriptor]()
	for i := range wire.NumField() {
		w, p := wire.Field(i), pack.Field(i)
		if tag := w.Tag.Get("toml"); tag != "" {
			t.Errorf("abi.Descriptor.%s has the TOML key %q: the pack's keys are packDescriptor's", w.Name, tag)
		}
		key, _, _ := strings.Cut(w.Tag.Get("json"), ",")
		if key != "-" && key != p.Tag.Get("toml") {
			t.Errorf("%s: the wire's key is %q, the pack's %q", w.Name, key, p.Tag.Get("toml"))
		}
	}
}
