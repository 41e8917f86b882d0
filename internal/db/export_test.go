package db

import (
	"testing"
)

// Register adds k to the registry until t ends: a kind registered by a test, as a new
// kind's one line in kinds.go would register it (its dialect, instance driver and plan
// rules then reach target, instance and plan from the registry).
func Register(t testing.TB, k Kind) {
	t.Helper()
	if _, dup := registry[k.Name()]; dup {
		t.Fatalf("kind %s is already registered", k.Name())
	}
	registry[k.Name()] = k
	t.Cleanup(func() { delete(registry, k.Name()) })
}
