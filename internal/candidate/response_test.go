package candidate

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func TestDecodeResponse(t *testing.T) {
	tried := make([]abi.Attempt, abi.MaxTried+5)
	for i := range tried {
		tried[i] = abi.Attempt{Path: "/p\n", Reason: "r\x1b[2J"}
	}
	ignored := make([]abi.IgnoredVar, abi.MaxIgnored+1)
	for i := range ignored {
		ignored[i] = abi.IgnoredVar{Var: "V\x1b", Reason: "why\n"}
	}
	b, _ := json.Marshal(abi.Response{Tried: tried, Ignored: ignored, Error: "e\r"})
	resp, err := DecodeResponse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Tried) != abi.MaxTried || resp.Tried[abi.MaxTried-1].Reason != "(6 more not kept: a step keeps 1000)" {
		t.Errorf("%d tried kept, the last %+v; want %d, the last saying what was dropped", len(resp.Tried), resp.Tried[len(resp.Tried)-1], abi.MaxTried)
	}
	if a := resp.Tried[0]; a.Path != `/p\n` || a.Reason != `r\x1b[2J` || resp.Error != `e\r` {
		t.Errorf("not escaped: %+v, error %q", a, resp.Error)
	}
	if n, in := len(resp.Ignored), resp.Ignored[0]; n != abi.MaxIgnored || in.Var != `V\x1b` || in.Reason != `why\n` {
		t.Errorf("%d ignored kept, the first %+v; want %d, escaped", n, in, abi.MaxIgnored)
	}
	b, _ = json.Marshal(abi.Response{Candidates: make([]abi.Candidate, abi.MaxCandidates+1)})
	if _, err := DecodeResponse(b); err == nil || !strings.Contains(err.Error(), "1001 candidates, over the 1000 a step may propose") {
		t.Errorf("%d candidates: %v", abi.MaxCandidates+1, err)
	}
}

// FuzzDecodeResponse checks decodeResponse against encoding/json: the same verdict and, within the
// bounds, the same candidates.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"candidates":[{"path":"/a","found_via":"x"},{"path":"/b"}],"tried":[{"path":"/c","reason":"no"}]}`,
		`{"candidates":null,"tried":null}`, `{"candidates":{}}`, `{"Candidates":[{"Path":"/a"}]}`,
		`{"candidates":[{"path":"/a"}],"candidates":[{"path":"/b"}]}`, `{"CAndidAtes":[{"pAth":"0"}],"CAndidAtes":[{}]}`, `{"candidates":[1]}`, `[]`, `{"error":"x\u001b"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want abi.Response
		wantErr := json.Unmarshal(data, &want)
		got, err := DecodeResponse(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("decodeResponse: %v; encoding/json: %v", err, wantErr)
		}
		if err != nil || len(want.Candidates) > abi.MaxCandidates {
			return
		}
		if len(got.Candidates) != len(want.Candidates) {
			t.Fatalf("%d candidates; encoding/json: %d", len(got.Candidates), len(want.Candidates))
		}
		if strings.Count(strings.ToLower(string(data)), "candidates") > 1 {
			return // a key given twice: encoding/json decodes the second into the first's elements
		}
		for i := range got.Candidates {
			if got.Candidates[i] != want.Candidates[i] {
				t.Fatalf("candidate %d: %+v; encoding/json: %+v", i, got.Candidates[i], want.Candidates[i])
			}
		}
	})
}

// TestDecodeResponse_overTheBoundCostsLittle: a response of 200,000 candidates is refused for what
// reading its first 1,000 costs, not for what decoding all of them would (about 30 MB).
func TestDecodeResponse_overTheBoundCostsLittle(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"candidates":[`)
	for i := range 200_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"path":"/site/nvidia/cu13/lib/libcudart.so.13","found_via":"x"}`)
	}
	b.WriteString(`]}`)
	data := []byte(b.String())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := DecodeResponse(data)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "200000 candidates, over the 1000 a step may propose") {
		t.Fatalf("DecodeResponse: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Fatalf("refusing %d bytes of candidates allocated %d bytes", len(data), alloc)
	}
}
