package host

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func Test_decodeResponse(t *testing.T) {
	tried := make([]abi.Attempt, maxTried+5)
	for i := range tried {
		tried[i] = abi.Attempt{Path: "/p\n", Reason: "r\x1b[2J"}
	}
	b, _ := json.Marshal(abi.Response{Tried: tried, Error: "e\r"})
	resp, err := decodeResponse("s", b)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Tried) != maxTried || resp.Tried[maxTried-1].Reason != "(6 more not kept: a step keeps 1000)" {
		t.Errorf("%d tried kept, the last %+v; want %d, the last saying what was dropped", len(resp.Tried), resp.Tried[len(resp.Tried)-1], maxTried)
	}
	if a := resp.Tried[0]; a.Path != `/p\n` || a.Reason != `r\x1b[2J` || resp.Error != `e\r` {
		t.Errorf("not escaped: %+v, error %q", a, resp.Error)
	}
	b, _ = json.Marshal(abi.Response{Candidates: make([]abi.Candidate, maxCandidates+1)})
	if _, err := decodeResponse("s", b); err == nil || !strings.Contains(err.Error(), "1001 candidates, over the 1000 a step may propose") {
		t.Errorf("%d candidates: %v", maxCandidates+1, err)
	}
}
