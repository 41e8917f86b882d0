package analyze_test

import (
	"testing"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/db"
)

// The metric lists the stall rules read are declared by collectors (the kinds' and
// the host's).
func TestStallMetricsDeclared(t *testing.T) {
	vocab, err := db.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	for list, names := range analyze.StallMetricLists() {
		for _, n := range names {
			if !vocab.Declared(n) {
				t.Errorf("%s: %s is not a declared metric", list, n)
			}
		}
	}
}
