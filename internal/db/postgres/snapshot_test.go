package postgres

import (
	"reflect"
	"testing"
)

// A snapshot's Activity section: commits and WAL on the line, checkpoints after it.
func TestActivity(t *testing.T) {
	parts, facts := collectSide{}.Activity(map[string]float64{pgXactCommit: 120, pgWALBytes: 3 << 20, pgCheckpointsReq: 0.5, pgCheckpointsTimed: 0})
	if want := []string{"120 commits/s", "WAL 3.0 MB/s"}; !reflect.DeepEqual(parts, want) {
		t.Errorf("parts %q, want %q", parts, want)
	}
	if want := [][2]string{{"checkpoints", "checkpoints_req during the sampling (0.50/s)"}}; !reflect.DeepEqual(facts, want) {
		t.Errorf("facts %q, want %q", facts, want)
	}
}
