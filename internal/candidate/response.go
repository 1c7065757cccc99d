package candidate

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
)

// DecodeResponse reads a plugin's response: within abi's bounds (MaxCandidates, MaxTried,
// MaxIgnored), and with everything it says that the host may print (what it tried, passed over and
// why, its error) escaped. Each candidate costs the host a check (a walk of its path, an open, a read
// of its header) and each entry a line in the trace and in the result cache, so a plugin that answers
// with a million is refused whole rather than checked or kept. Candidate paths stay as the plugin
// wrote them: they are checked as they are, and escaped only where they are shown.
func DecodeResponse(out []byte) (*abi.Response, error) {
	var r struct {
		Candidates bounded[abi.Candidate]  `json:"candidates"`
		Tried      bounded[abi.Attempt]    `json:"tried"`
		Ignored    bounded[abi.IgnoredVar] `json:"ignored"`
		Error      string                  `json:"error"`
	}
	r.Candidates.max, r.Tried.max, r.Ignored.max = abi.MaxCandidates, abi.MaxTried, abi.MaxIgnored
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("unreadable response: %s", printable.String(err.Error()))
	}
	if n := r.Candidates.n; n > abi.MaxCandidates {
		return nil, fmt.Errorf("%d candidates, over the %d a step may propose: none checked", n, abi.MaxCandidates)
	}
	resp := abi.Response{Candidates: r.Candidates.list, Tried: r.Tried.list, Ignored: r.Ignored.list, Error: r.Error}
	if n := r.Tried.n; n > abi.MaxTried {
		resp.Tried = append(resp.Tried[:abi.MaxTried-1], abi.Attempt{Reason: fmt.Sprintf("(%d more not kept: a step keeps %d)", n-abi.MaxTried+1, abi.MaxTried)})
	}
	for i := range resp.Tried {
		resp.Tried[i].Path = printable.String(resp.Tried[i].Path)
		resp.Tried[i].Reason = printable.String(resp.Tried[i].Reason)
	}
	for i := range resp.Ignored {
		resp.Ignored[i].Var = printable.String(resp.Ignored[i].Var)
		resp.Ignored[i].Reason = printable.String(resp.Ignored[i].Reason)
	}
	resp.Error = printable.String(resp.Error)
	return &resp, nil
}

// bounded is a JSON array of which only the first max elements are decoded; the rest are counted
// (n is the array's length), so that a response of a million candidates costs no more memory than
// one of max.
type bounded[T any] struct {
	max  int
	n    int
	list []T
}

func (b *bounded[T]) UnmarshalJSON(data []byte) error {
	b.n, b.list = 0, nil // a key given twice: the last one counts, as encoding/json has it
	if string(data) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return fmt.Errorf("not an array")
	}
	for ; dec.More(); b.n++ {
		if b.n >= b.max {
			var skip struct{}
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		var v T
		if err := dec.Decode(&v); err != nil {
			return err
		}
		b.list = append(b.list, v)
	}
	return nil
}
