package steptest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// The C SDK (abi/c) as the builtin module ships it: what the host never sends still gets an answer,
// never a trap, and in the Go SDK's words.

func TestStepsRequests(t *testing.T) {
	sb := NewSandbox(t, t.TempDir())
	g := sb.Guest(nil)
	names := strings.Join(sb.Describe(t).Names, ", ")
	if names != "canary, conda, envroots, programfiles, wheels" {
		t.Errorf("the module registers %s", names)
	}
	for _, tt := range []struct{ req, want string }{
		{`{"abi":3,"step":"wheels"}`, "abi version mismatch: host 3, plugin 2"},
		{`{"abi":2,"step":"nope"}`, `no search named "nope" in this plugin (has ` + names + `)`},
		{`{"abi":2,"entry":"nope"}`, `no search named "nope" in this plugin`},
		{`{"abi":2,`, "bad request: "},
		{`[1,2]`, "bad request: "},
		{`{"abi":2} x`, "bad request: "},
		{``, "bad request: "},
	} {
		got := g.Raw(t, []byte(tt.req))
		var resp abi.Response
		if err := json.Unmarshal(got, &resp); err != nil || !strings.HasPrefix(resp.Error, tt.want) {
			t.Errorf("%s: got %s, want error %q", tt.req, got, tt.want)
		}
	}
}

// TestStepsRequests_goWords: the SDK's errors are the Go SDK's texts (abi/texts.go, copied into C by
// go generate ./abi), quoting included.
func TestStepsRequests_goWords(t *testing.T) {
	g := NewSandbox(t, t.TempDir()).Guest(nil)
	for _, req := range []abi.Request{
		{ABI: 7, Step: "wheels"},
		{ABI: -3, Entry: "wheels"},
		{ABI: abi.Version, Entry: "nope"},
		{ABI: abi.Version, Entry: "a\"b\\c\td\x01e\x7f"},
		{ABI: abi.Version, Entry: "é ü 日本 \U0001F600"},
	} {
		in, _ := json.Marshal(req)
		var got abi.Response
		json.Unmarshal(g.Raw(t, in), &got)
		want := abi.Run(abi.Env{}, &req)
		if got.Error != want.Error {
			t.Errorf("%s: C says %q, Go says %q", in, got.Error, want.Error)
		}
	}
}

// FuzzStepsRequest: any request bytes get valid JSON back, never a trap.
func FuzzStepsRequest(f *testing.F) {
	req, _ := json.Marshal(abi.Request{ABI: abi.Version, Step: "wheels", Entry: "wheels", Kind: abi.KindDynamicLib,
		Platform: abi.Platform{OS: "linux", Arch: "amd64"}, Library: abi.Descriptor{Name: "cudart", LinuxSonames: []string{"libcudart.so.12"}, SitePackagesLinux: []string{"nvidia/cu13/lib"}},
		Roots: []abi.Root{{Path: "/nonexistent/site", Role: abi.RoleSitePackages}}})
	f.Add(req)
	f.Add([]byte(`{"abi":2,"entry":"programfiles","platform":{"os":"windows","arch":"amd64"},"library":{"name":"\u00e9\ud800","windows_dlls":["a\"b"],"program_files_dirs_windows":["[","x/*/[a-]"]}}`))
	f.Add([]byte(`{"abi":2,"entry":"canary","library":{"ctk_root_canary_anchor_libnames":["libcudart.so.12",""]}}`))
	f.Add([]byte(`{"abi":2,"entry":"x\u0001\"","options":{"a":"b","c":1},"library":{"requires_rtld_deepbind":true}}`))
	g := NewSandbox(f, f.TempDir()).Guest(map[string]string{"ProgramW6432": "/nonexistent", "CONDA_PREFIX": "/x"})
	f.Fuzz(func(t *testing.T, in []byte) {
		if out := g.Raw(t, in); !json.Valid(out) {
			t.Fatalf("request %q: response %q is not JSON", in, out)
		}
	})
}
