package resultcache

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// sampleEntries are entries as Write writes them, with the strings that need escapes.
func sampleEntries() []Entry {
	seen := []observe.Observation{
		{Path: "PATH", What: observe.Env, Seen: "/usr/bin:/bin"},
		{Root: "/venv/site-packages", Path: "nvidia/cu13/lib", What: observe.Dir, Seen: "0123abcd"},
		{Path: "/opt/é/x<y>&\"q\"\\\t\u2028", What: observe.Stat, Seen: "-rwxr-xr-x 1 2 3"},
		{Path: "/lib/libcudart.so.13", What: observe.Stat, Seen: "absent"},
	}
	return []Entry{
		{Version: 1, Key: "k", Library: &Library{Name: "cudart", Kind: abi.KindDynamicLib, Path: "/venv/libcudart.so.13", FoundVia: "site-packages", Step: "wheels"}, Sites: "abc", Seen: seen},
		{Version: 1, Key: "k", Err: &Error{Looked: []string{"libcufftMp.so.12"}, Attempts: []search.Attempt{
			{Step: "system", Path: "/etc/ld.so.cache", Reason: `no entry for "libcufftMp.so.12" with flags 0x0303`},
			{Step: "canary", Reason: "the descriptor names no canary library"},
		}}, Live: []string{"libcufftMp.so.12", "libcufftMp.so.11"}, Seen: seen},
		{Version: 1, Key: "k", Err: &Error{}, Seen: seen[:1]},
		{Version: 1, Key: "k", Err: &Error{Looked: []string{}, Attempts: []search.Attempt{}}, Seen: []observe.Observation{}},
	}
}

// Test_decodeEntry: what storeFind writes is read by hand, not handed to encoding/json, and reads
// the same.
func Test_decodeEntry(t *testing.T) {
	for i, want := range sampleEntries() {
		data, err := json.Marshal(&want)
		if err != nil {
			t.Fatal(err)
		}
		var got Entry
		d := entryDecoder{b: data, s: string(data)}
		if !d.entry(&got) {
			t.Fatalf("entry %d: the hand decoder gave up on what json.Marshal wrote:\n%s", i, data)
		}
		var viaJSON Entry
		if err := json.Unmarshal(data, &viaJSON); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, viaJSON) || !reflect.DeepEqual(got, want) {
			t.Fatalf("entry %d:\n got  %+v\n json %+v\n want %+v", i, got, viaJSON, want)
		}
	}
}

// Test_decodeEntry_knowsEveryField fails when a field is added to what an entry holds and the hand
// decoder was not taught it: such an entry would otherwise always fall back to encoding/json.
func Test_decodeEntry_knowsEveryField(t *testing.T) {
	for _, tt := range []struct {
		typ  any
		keys []string
	}{
		{Entry{}, entryKeys},
		{Library{}, libraryKeys},
		{Error{}, errorKeys},
		{search.Attempt{}, attemptKeys},
		{Ignored{}, ignoredKeys},
		{observe.Observation{}, observationKeys},
	} {
		typ := reflect.TypeOf(tt.typ)
		var tags []string
		for i := range typ.NumField() {
			tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			tags = append(tags, tag)
		}
		if !slices.Equal(tags, tt.keys) {
			t.Errorf("%s has the JSON fields %q; the decoder reads %q", typ, tags, tt.keys)
		}
	}
}

// Test_decodeEntry_fallsBack: what the hand decoder does not read is decoded by encoding/json, with
// its results and its errors.
func Test_decodeEntry_fallsBack(t *testing.T) {
	tests := []struct {
		name, data string
		want       Entry
		wantErr    bool
	}{
		{name: "another case", data: `{"Version":1,"KEY":"k"}`, want: Entry{Version: 1, Key: "k"}},
		{name: "an unknown key", data: `{"version":1,"other":[1,2],"key":"k"}`, want: Entry{Version: 1, Key: "k"}},
		{name: "a key twice", data: `{"key":"a","key":"b"}`, want: Entry{Key: "b"}},
		{name: "a surrogate pair", data: `{"key":"\ud83d\ude00"}`, want: Entry{Key: "😀"}},
		{name: "invalid UTF-8", data: "{\"key\":\"\xff\"}", want: Entry{Key: "\ufffd"}},
		{name: "null string", data: `{"key":null}`},
		{name: "a fraction", data: `{"version":1.5}`, wantErr: true},
		{name: "trailing data", data: `{"key":"k"} x`, wantErr: true},
		{name: "truncated", data: `{"key":"k"`, wantErr: true},
		{name: "a string for a number", data: `{"version":"1"}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Entry
			err := decodeEntry([]byte(tt.data), &got)
			if (err != nil) != tt.wantErr || !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decodeEntry(%s) = %+v, %v; want %+v (error: %v)", tt.data, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// FuzzDecodeEntry: wherever the hand decoder reads an entry, encoding/json reads it too, the same.
func FuzzDecodeEntry(f *testing.F) {
	for _, c := range sampleEntries() {
		data, _ := json.Marshal(&c)
		f.Add(data)
	}
	f.Add([]byte(`{"version":-0,"key":"\u00e9\/","live":null,"library":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, std Entry
		d := entryDecoder{b: data, s: string(data)}
		if !d.entry(&fast) {
			return
		}
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatalf("hand-decoded what encoding/json refuses (%v): %q", err, data)
		}
		if !reflect.DeepEqual(fast, std) {
			t.Fatalf("%q:\n hand %+v\n json %+v", data, fast, std)
		}
	})
}
