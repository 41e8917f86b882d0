package plan

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/fathom-lab/fathom/internal/instance"
)

// KindRules is what the plan file knows of one database kind: which targets are its,
// which throwaway instances, how its settings are named and checked. Each kind's
// bundle fills its rules (internal/db/KIND) and internal/db registers every
// registered kind's with RegisterKind; plan itself never names a kind.
type KindRules struct {
	// Name is the kind's name ("postgres").
	Name string
	// OwnsDSN says whether a target DSN is this kind's.
	OwnsDSN func(dsn string) bool
	// Instance is the kind of its throwaway instances ("": it has none).
	Instance instance.Kind
	// Reserved are the settings fathom sets itself on an instance.
	Reserved []string
	// SettingKey is the spelling settings are compared by (nil: '-' read as '_', as
	// MySQL's option files accept).
	SettingKey func(name string) string
	// NoSettings, when set, says that the kind has no server settings and where to set
	// things instead, as the plan check's message.
	NoSettings string
	// Timings are the settings that act at shutdown or startup, by lower-case name.
	Timings map[string]Timing
}

var (
	kindsMu sync.RWMutex
	kinds   = map[string]KindRules{}
)

// RegisterKind adds a kind's rules; unregister removes them again (for a kind a test
// registers). A kind registered twice is a bug (it panics).
func RegisterKind(r KindRules) (unregister func()) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if r.Name == "" {
		panic("plan: RegisterKind without a name")
	}
	if _, dup := kinds[r.Name]; dup {
		panic(fmt.Sprintf("plan: kind %s registered twice", r.Name))
	}
	kinds[r.Name] = r
	return func() {
		kindsMu.Lock()
		defer kindsMu.Unlock()
		delete(kinds, r.Name)
	}
}

// rulesOf is the rules of the kind named name (the zero KindRules for none).
func rulesOf(name string) KindRules {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	return kinds[name]
}

// eachKind lists the registered rules in name order.
func eachKind() []KindRules {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	var out []KindRules
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range kinds {
			if !yield(n) {
				return
			}
		}
	}) {
		out = append(out, kinds[n])
	}
	return out
}

// kindOfInstance is the name of the kind whose instances are of kind k, or "".
func kindOfInstance(k instance.Kind) string {
	for _, r := range eachKind() {
		if r.Instance != "" && r.Instance == k {
			return r.Name
		}
	}
	return ""
}

// kindOfDSN is the name of the kind that owns a target DSN, or "".
func kindOfDSN(dsn string) string {
	for _, r := range eachKind() {
		if r.OwnsDSN != nil && r.OwnsDSN(strings.TrimSpace(dsn)) {
			return r.Name
		}
	}
	return ""
}
