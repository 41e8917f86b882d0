package plan_test

import (
	"strings"
	"testing"
)

// agents: N runs a cell's clients on N fathom agents; it can be an axis too.
func TestAgentsKey(t *testing.T) {
	p, err := decodeString(t, "experiment: spread\ntarget: postgres://bench@db1/bench\nworkload: tpcb\nclients: 12\nmatrix:\n  agents: [0, 3]\n")
	if err != nil {
		t.Fatal(err)
	}
	cells := p.Cells()
	if len(cells) != 2 || cells[0].Agents != 0 || cells[1].Agents != 3 || cells[1].Key() != "agents=3" {
		t.Errorf("cells: %+v %+v", cells[0], cells[1])
	}
	if _, err := decodeString(t, "experiment: bad\ntarget: postgres://bench@db1/bench\nworkload: tpcb\nagents: -2\n"); err == nil || !strings.Contains(err.Error(), "agents must be a whole number") {
		t.Errorf("agents: -2 gave %v", err)
	}
}
