package envroots

import (
	"testing"

	"github.com/pathfinder-dev/pathfinder/plugins/internal/steptest"
)

// TestStepMatchesReference runs the C of this step, as the builtin module ships it (envroots.c), and
// Search over the same random trees, and requires the same candidates, attempts and log lines.
func TestStepMatchesReference(t *testing.T) { steptest.MatchReference(t, Plugin) }
