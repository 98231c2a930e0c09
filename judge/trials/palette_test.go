package trials

import (
	"slices"
	"testing"
)

// Each tool's line has its own dash pattern, for readers of no colour at
// all (a grey print); the colours are platform/palette's, checked there
// against each dichromacy.
func TestToolDashesDiffer(t *testing.T) {
	for i := range 6 {
		for j := i + 1; j < 6; j++ {
			if slices.Equal(toolDashes(i), toolDashes(j)) {
				t.Errorf("tools %d and %d are drawn with the same dashes", i, j)
			}
		}
	}
}
