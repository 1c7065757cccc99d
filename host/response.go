package host

import (
	"encoding/json"
	"fmt"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/internal/wasm"
)

// What one step's response may hold. Each candidate costs the host a check (a walk of its path, an
// open, a read of its header) and each entry a line in the trace and in the result cache, so a
// plugin that answers with a million is refused whole rather than checked or kept.
const (
	maxCandidates = 1000
	maxTried      = 1000
)

// decodeResponse reads a plugin's response: within the bounds above, and with everything it says
// that the host may print (what it tried and why, its error) escaped. Candidate paths stay as the
// plugin wrote them: they are checked as they are, and escaped only where they are shown.
func decodeResponse(step string, out []byte) (*abi.Response, error) {
	var resp abi.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("pathfinder: plugin %q: unreadable response: %s", step, wasm.Printable(err.Error()))
	}
	if n := len(resp.Candidates); n > maxCandidates {
		return nil, fmt.Errorf("pathfinder: plugin %q: %d candidates, over the %d a step may propose: none checked", step, n, maxCandidates)
	}
	if n := len(resp.Tried); n > maxTried {
		resp.Tried = append(resp.Tried[:maxTried-1], abi.Attempt{Reason: fmt.Sprintf("(%d more not kept: a step keeps %d)", n-maxTried+1, maxTried)})
	}
	for i := range resp.Tried {
		resp.Tried[i].Path = wasm.Printable(resp.Tried[i].Path)
		resp.Tried[i].Reason = wasm.Printable(resp.Tried[i].Reason)
	}
	resp.Error = wasm.Printable(resp.Error)
	return &resp, nil
}
