package db

import (
	"testing"

	"github.com/fathom-lab/fathom/internal/plan"
)

// Register adds k to the registry (and its rules to plan's) until t ends: a kind
// registered by a test, as a new kind's one line in kinds.go would register it.
func Register(t testing.TB, k Kind) {
	t.Helper()
	if _, dup := registry[k.Name()]; dup {
		t.Fatalf("kind %s is already registered", k.Name())
	}
	registry[k.Name()] = k
	unregister := plan.RegisterKind(planRules(k))
	t.Cleanup(func() {
		delete(registry, k.Name())
		unregister()
	})
}
