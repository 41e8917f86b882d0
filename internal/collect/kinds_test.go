package collect_test

import (
	"testing"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
)

// The kinds' collectors (internal/db/KIND) each declare their metrics, under names no
// other collector has, and every collector the vocabulary declares metrics for is
// registered by a kind or the host.
func TestEveryCollectorDeclares(t *testing.T) {
	kinds := db.CollectAll()
	if len(kinds) < 4 {
		t.Fatalf("only %d kinds have a collect side", len(kinds))
	}
	seen := map[string]string{}
	for src, list := range collect.SourceCollectors(kinds...) {
		for _, c := range list {
			if len(c.Metrics()) == 0 {
				t.Errorf("%s collector %s declares no metrics", src, c.Name())
			}
			if prev, dup := seen[c.Name()]; dup {
				t.Errorf("collector %q registered for %s and %s", c.Name(), prev, src)
			}
			seen[c.Name()] = src
		}
	}
	for _, n := range collect.DeclaredCollectors() {
		found := false
		for _, c := range collect.List(kinds...) {
			found = found || c.Name == n
		}
		if !found {
			t.Errorf("metrics declared for %s, which is not a registered collector", n)
		}
	}
}

// The key metrics show and watch list first are declared.
func TestKeyMetricsDeclared(t *testing.T) {
	vocab := vocabulary(t)
	for _, d := range append(db.CollectAll(), nil) {
		name := "none"
		if d != nil {
			name = d.Name()
		}
		list := collect.KeyMetrics(d)
		if len(list) < len(collect.HostKeyMetrics) {
			t.Errorf("%s: key metrics %v lack the host's", name, list)
		}
		for _, n := range list {
			if !vocab.Declared(n) {
				t.Errorf("%s key metric %s is not declared", name, n)
			}
		}
	}
}
