package plan

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/fathom-lab/fathom/internal/instance"
)

// KindRules is what the plan file knows of one database kind: which targets are its,
// which throwaway instances, how its settings are named and checked. Each kind's
// bundle fills its rules (internal/db/KIND) and internal/db hands every
// registered kind's in with UseKinds; plan itself never names a kind.
type KindRules struct {
	// Name is the kind's name ("postgres"); Title its name for people ("Redis").
	Name, Title string
	// CommandHooks is the key of hooks that send the kind's own commands instead of
	// SQL ("redis"), "" when its hooks give sql.
	CommandHooks string
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

// kindList gives the registered kinds' rules, each filled from its kind's bundle;
// internal/db hands its registry in with UseKinds, so that plan keeps no list of its
// own.
var kindList atomic.Pointer[func() []KindRules]

// UseKinds makes list the source of the kinds' rules (internal/db calls it with its
// registry's). A rule without a name, or two of one name, is a bug (it panics when
// read).
func UseKinds(list func() []KindRules) { kindList.Store(&list) }

// rulesOf is the rules of the kind named name (the zero KindRules for none).
func rulesOf(name string) KindRules {
	for _, r := range eachKind() {
		if r.Name == name {
			return r
		}
	}
	return KindRules{}
}

// eachKind lists the registered rules in name order.
func eachKind() []KindRules {
	var out []KindRules
	if f := kindList.Load(); f != nil {
		out = slices.Clone((*f)())
	}
	slices.SortFunc(out, func(a, b KindRules) int { return strings.Compare(a.Name, b.Name) })
	for i, r := range out {
		if r.Name == "" || i > 0 && out[i-1].Name == r.Name {
			panic(fmt.Sprintf("plan: kind rules without a name or twice: %q", r.Name))
		}
	}
	return out
}

// commandHookKeys lists the registered kinds' CommandHooks keys, in kind name order.
func commandHookKeys() []string {
	var out []string
	for _, r := range eachKind() {
		if r.CommandHooks != "" && !slices.Contains(out, r.CommandHooks) {
			out = append(out, r.CommandHooks)
		}
	}
	return out
}

// commandHookTitle is the title of the kind whose hooks key is key ("Redis").
func commandHookTitle(key string) string {
	for _, r := range eachKind() {
		if r.CommandHooks == key {
			return r.Title
		}
	}
	return key
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
