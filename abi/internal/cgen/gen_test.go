package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// TestContractIsCurrent fails when abi/c/contract.h or contract.c is not what package abi makes
// today: a field, a constant or a text changed in Go and the C SDK was not regenerated.
func TestContractIsCurrent(t *testing.T) {
	h, c, err := generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		want []byte
	}{{"contract.h", h}, {"contract.c", c}} {
		got, err := os.ReadFile(filepath.Join("../../c", f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("abi/c/%s does not match package abi: run go generate ./abi, then go generate ./builtin", f.name)
		}
	}
}

// Test_generate_follows: what the generator writes moves with the Go it reads.
func Test_generate_follows(t *testing.T) {
	type Thing struct {
		Name  string   `json:"name"`
		Tags  []string `json:"tags,omitempty"`
		Count int      `json:"count"`
		Ok    bool     `json:"ok,omitempty"`
	}
	type Box struct {
		Things []Thing `json:"things"`
	}
	saveD, saveE := decoded, encoded
	defer func() { decoded, encoded = saveD, saveE }()
	decoded, encoded = []reflect.Type{reflect.TypeFor[Box]()}, []reflect.Type{reflect.TypeFor[Box]()}
	h, c, err := generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"typedef struct {\n\tconst char *name;\n\tstrs tags;\n\tint count;\n\tbool ok;\n} thing;",
		"thing *things;\n\tint nthings, capthings;", "void decode_box(const json *j, box *v);", "#define ABI_VERSION " + strconv.Itoa(abi.Version),
		"#define TEXT_NOT_SET \"not set\"", "const char *text_version_mismatch(long long a1, long long a2);"} {
		if !strings.Contains(string(h), want) {
			t.Errorf("contract.h lacks %q:\n%s", want, h)
		}
	}
	for _, want := range []string{"v->tags = json_strs(j, \"tags\");", "decode_thing(things->items[i], &v->things[v->nthings++]);",
		"\tput_key(o, &sep, \"things\");\n\tPUT_ARRAY(o, v->things, v->nthings, encode_thing);",
		"\tif (v->tags.n) {\n\t\tput_key(o, &sep, \"tags\");", "\tput_key(o, &sep, \"count\");\n\tput_int(o, v->count);",
		"return cat(\"no search named \", quote(a1), \" in this plugin\", NULL);"} {
		if !strings.Contains(string(c), want) {
			t.Errorf("contract.c lacks %q:\n%s", want, c)
		}
	}
}

func Test_generate_refuses(t *testing.T) {
	type NoTag struct{ Name string }
	type Float struct {
		X float64 `json:"x"`
	}
	saveD := decoded
	defer func() { decoded = saveD }()
	for _, typ := range []reflect.Type{reflect.TypeFor[NoTag](), reflect.TypeFor[Float]()} {
		decoded = []reflect.Type{typ}
		if _, _, err := generate("../.."); err == nil {
			t.Errorf("%s: no error", typ)
		}
	}
}

func Test_cString(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:        `"plain"`,
		`a"b\c`:        `"a\"b\\c"`,
		"tab\there":    `"tab\011here"`,
		"é":            `"\303\251"`,
		"what??/":      `"what\?\?/"`,
		"\x7f1":        `"\1771"`,
		"$%s relative": `"$%s relative"`,
	} {
		if got := cString(in); got != want {
			t.Errorf("cString(%q) = %s, want %s", in, got, want)
		}
	}
}
