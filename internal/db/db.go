// Package db is fathom's list of database kinds. Each kind lives in its own directory
// (postgres/, mysql/, sqlite/, redis/) and is one bundle: a small core (its name, the
// DSN schemes it opens, opening a target, its SQL dialect) and optional capabilities
// that callers find by type assertion (server collectors and snapshot sections, the
// check source, stall rules, default report charts and watch columns, connection
// capacity, throwaway instances, settings …), whose code is in the kind's directory.
// The registry is the explicit map in kinds.go: adding a kind is its directory and one
// line there.
//
// Libraries below this package (target, collect, check, analyze, instance, plan)
// define the contracts and never import it or a kind; the engine (run, experiment),
// report and the commands look a kind up here and hand its capabilities down.
package db

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/capture"
	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// Kind is the core of a database kind's bundle.
type Kind interface {
	// Name is the kind's name, as its targets' Kind() report it ("postgres").
	Name() string
	// Title is the name for people ("PostgreSQL", "MySQL/MariaDB").
	Title() string
	// Schemes are the DSN prefixes the kind opens ("postgres://", "sqlite:").
	Schemes() []string
	// Open parses dsn and returns its target without connecting. Errors are one line,
	// classified (*target.Error), and never contain a password.
	Open(dsn string, cfg target.Config) (target.Target, error)
	// Dialect is how SQL differs for this kind.
	Dialect() *target.Dialect
}

// DSNMatcher is a kind that also recognises DSNs without one of its schemes
// (PostgreSQL: libpq's host=… dbname=…).
type DSNMatcher interface {
	MatchDSN(dsn string) bool
}

// Embedded is a kind whose database lives in this process (a file opened by the
// driver): no server connection to sample, no server process, no connection limit.
type Embedded interface {
	Embedded() bool
}

// Collecting is a kind that collect can sample and snapshot: its server collectors
// (declaring the metrics they emit), server discovery and snapshot sections.
type Collecting interface {
	Collect() collect.Database
}

// CheckSource is a kind that `fathom check` and `fathom heartbeat` can use: its
// dialect reads a check sample over one connection and holds what differs between
// kinds (replication lag, the heartbeat table, the connections mode).
type CheckSource interface {
	CheckDialect() *check.Dialect
}

// Capacity is a kind that says how many more connections its server accepts (before a
// run opens its clients) and how many files one client's connection holds open.
type Capacity interface {
	FilesPerClient() uint64
	// ServerRoom is the room for more connections from this user; ok is false when the
	// server does not say. why explains the number, fix says how to raise it.
	ServerRoom(ctx context.Context, conn target.Conn) (room int, why, fix string, ok bool)
}

// Lookup is the kind named name ("postgres"), or nil.
func Lookup(name string) Kind { return registry[name] }

// Names lists the registered kinds, sorted.
func Names() []string {
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ForDSN is the kind that opens dsn (the longest matching scheme, then the kinds that
// recognise other forms), or nil.
func ForDSN(dsn string) Kind {
	d := strings.TrimSpace(dsn)
	var best Kind
	n := 0
	for _, k := range registry {
		for _, s := range k.Schemes() {
			if len(s) > n && strings.HasPrefix(d, s) {
				best, n = k, len(s)
			}
		}
	}
	if best != nil {
		return best
	}
	for _, name := range Names() {
		if m, ok := registry[name].(DSNMatcher); ok && m.MatchDSN(d) {
			return registry[name]
		}
	}
	return nil
}

// KindOf is the name of the kind that opens dsn, or "".
func KindOf(dsn string) string {
	if k := ForDSN(dsn); k != nil {
		return k.Name()
	}
	return ""
}

// Open parses a DSN and returns its kind's target without connecting. Errors are one
// line and never contain a password.
func Open(dsn string, cfg target.Config) (target.Target, error) {
	if k := ForDSN(dsn); k != nil {
		return k.Open(strings.TrimSpace(dsn), cfg)
	}
	d := strings.TrimSpace(dsn)
	what := "unknown target"
	if scheme, _, ok := strings.Cut(d, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, "@:/ ") {
		what = "unknown target kind " + strconv.Quote(scheme)
	} else if d == "" {
		what = "unknown target: the DSN is empty"
	}
	// The DSN itself is not shown: in a form fathom does not know, a password cannot be
	// found and masked reliably.
	return nil, target.Errorf(target.ClassOther, "", "%s: use %s", what, examples())
}

// examples lists a DSN form per kind, for messages.
func examples() string {
	var out []string
	for _, n := range Names() {
		if e, ok := registry[n].(interface{ DSNExample() string }); ok {
			out = append(out, e.DSNExample())
		} else if s := registry[n].Schemes(); len(s) > 0 {
			out = append(out, s[0]+"…")
		}
	}
	if len(out) > 1 {
		return strings.Join(out[:len(out)-1], ", ") + ", or " + out[len(out)-1]
	}
	return strings.Join(out, "")
}

// CheckOf is the check dialect of the kind named name, or nil when it has none (or
// there is no such kind).
func CheckOf(name string) *check.Dialect {
	if c, ok := registry[name].(CheckSource); ok {
		return c.CheckDialect()
	}
	return nil
}

// SettingsKind is a kind whose server settings experiments can change and verify.
type SettingsKind interface {
	Settings() plan.Settings
}

// Instances is a kind that fathom can run throwaway instances of: its driver.
type Instances interface {
	InstanceDriver() instance.Driver
}

// PlanKind is a kind with rules of its own in plan files (which settings act at
// shutdown, which fathom sets itself on an instance, how settings are spelt).
type PlanKind interface {
	PlanRules() plan.KindRules
}

// planRules is the rules plan files follow for kind k: its own (PlanKind), with the
// DSNs it owns and its instances' kind.
func planRules(k Kind) plan.KindRules {
	var r plan.KindRules
	if p, ok := k.(PlanKind); ok {
		r = p.PlanRules()
	}
	name := k.Name()
	r.Name, r.Title = name, k.Title()
	r.OwnsDSN = func(dsn string) bool { return KindOf(dsn) == name }
	if i, ok := k.(Instances); ok {
		r.Instance = i.InstanceDriver().Kind()
	}
	return r
}

// The packages below db that need every kind's dialect, instance driver or plan rules
// read them from the registry's bundles through these lists: a kind's abilities are
// data of its bundle, registered by its one line in kinds.go and nowhere else.
func init() {
	target.UseDialects(dialects)
	instance.UseDrivers(InstanceDrivers)
	plan.UseKinds(kindRules)
}

// dialects lists the registered kinds' dialects, in name order.
func dialects() []*target.Dialect {
	var out []*target.Dialect
	for _, n := range Names() {
		out = append(out, registry[n].Dialect())
	}
	return out
}

// InstanceDrivers lists the drivers of the registered kinds that have throwaway
// instances, in kind name order.
func InstanceDrivers() []instance.Driver {
	var out []instance.Driver
	for _, n := range Names() {
		if i, ok := registry[n].(Instances); ok {
			out = append(out, i.InstanceDriver())
		}
	}
	return out
}

// kindRules lists every registered kind's plan rules.
func kindRules() []plan.KindRules {
	var out []plan.KindRules
	for _, n := range Names() {
		out = append(out, planRules(registry[n]))
	}
	return out
}

// SettingsOf is the settings capability of the kind named name, or nil.
func SettingsOf(name string) plan.Settings {
	if s, ok := registry[name].(SettingsKind); ok {
		return s.Settings()
	}
	return nil
}

// ForInstance is the kind whose throwaway instances are of kind k, or nil.
func ForInstance(k instance.Kind) Kind {
	for _, n := range Names() {
		if i, ok := registry[n].(Instances); ok && i.InstanceDriver().Kind() == k {
			return registry[n]
		}
	}
	return nil
}

// IsEmbedded reports whether the kind named name is embedded (see Embedded).
func IsEmbedded(name string) bool {
	e, ok := registry[name].(Embedded)
	return ok && e.Embedded()
}

// Missing is the error for a capability a kind does not have: "kind X has no settings
// support".
func Missing(kind, what string) error {
	if kind == "" {
		kind = "unknown"
	}
	return fmt.Errorf("kind %s has no %s support", kind, what)
}

// CollectOf is what collect needs for the kind named name, or nil when the kind has no
// collect support (or there is no such kind).
func CollectOf(name string) collect.Database {
	if c, ok := registry[name].(Collecting); ok {
		return c.Collect()
	}
	return nil
}

// CollectAll is the collect side of every kind that has one, in name order.
func CollectAll() []collect.Database {
	var out []collect.Database
	for _, n := range Names() {
		if c := CollectOf(n); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// Charting is a kind whose runs' reports draw default charts of its server metrics.
type Charting interface {
	DefaultCharts() []collect.Chart
}

// Watching is a kind with key figures for `fathom watch`'s live view.
type Watching interface {
	WatchColumns() []collect.WatchColumn
}

// ChartsOf is the default charts of the kind named name (none when it has no server
// metrics or there is no such kind), a fresh slice.
func ChartsOf(name string) []collect.Chart {
	if c, ok := registry[name].(Charting); ok {
		return c.DefaultCharts()
	}
	return nil
}

// WatchColumnsOf is the live view's columns of the kind named name (none when it has
// none or there is no such kind), a fresh slice.
func WatchColumnsOf(name string) []collect.WatchColumn {
	if w, ok := registry[name].(Watching); ok {
		return w.WatchColumns()
	}
	return nil
}

// Stalling is a kind with stall patterns of its own (checkpoints, the binary log,
// background saves), tried with the generic ones.
type Stalling interface {
	StallRules() []analyze.Rule
}

// StallRulesOf is the stall patterns of the kind named name (none when it has none or
// there is no such kind).
func StallRulesOf(name string) []analyze.Rule {
	if s, ok := registry[name].(Stalling); ok {
		return s.StallRules()
	}
	return nil
}

// StallNamer is a kind whose metrics the generic stall patterns read (its server's
// throughput, lock waits) or must not take for evidence (settings, sizes, fathom's
// own sampling queries).
type StallNamer interface {
	StallVocabulary() analyze.Vocabulary
}

// StallOf is what the kind named name says of stalls: its own patterns and its
// metrics' vocabulary (empty when it has neither or there is no such kind). Stall
// analysis takes it as data (analyze.StallKind).
func StallOf(name string) analyze.StallKind {
	k := analyze.StallKind{Rules: StallRulesOf(name)}
	if s, ok := registry[name].(StallNamer); ok {
		k.Vocabulary = s.StallVocabulary()
	}
	return k
}

// Capturing is a kind whose statement statistics and logs `fathom capture` reads.
type Capturing interface {
	CaptureReader() capture.Reader
}

// CaptureOf is the capture reader of the kind named name, or nil.
func CaptureOf(name string) capture.Reader {
	if c, ok := registry[name].(Capturing); ok {
		return c.CaptureReader()
	}
	return nil
}

// CommonLogReader is the capture reader of the registered kind whose log format most
// tools write (its reader is a capture.CommonLog: MySQL's slow query log), which
// `fathom capture --slow-log` uses for kinds without a reader of their own; nil when
// no kind says so.
func CommonLogReader() capture.Reader {
	for _, n := range Names() {
		if r := CaptureOf(n); r != nil {
			if c, ok := r.(capture.CommonLog); ok && c.CommonLog() {
				return r
			}
		}
	}
	return nil
}

// OptionFiler is a kind whose DSNs can name a client option file to read (MySQL's
// defaults-file): `fathom check --defaults-file` sets that DSN parameter.
type OptionFiler interface {
	OptionFileParam() string
}

// AuthHinter is a kind whose logins are checked elsewhere than the usual user and
// password (Redis: REDISCLI_AUTH, a passfile).
type AuthHinter interface {
	AuthHint() string
}

// AuthHintOf is what to check after the kind named name refused a login, "" for the
// usual hint.
func AuthHintOf(name string) string {
	if h, ok := registry[name].(AuthHinter); ok {
		return h.AuthHint()
	}
	return ""
}

// RestartTimer is a kind whose throwaway instances can be restarted from a chosen
// persistence file and timed until they answer (a plan's measure_restart).
type RestartTimer interface {
	MeasureRestarts(ctx context.Context, inst *instance.Instance, formats []string) ([]store.RestartFacts, error)
}

// Figures is what reports draw of each registered kind's server metrics, by name: its
// default charts and key metrics (then the host's). Reports take it as data.
func Figures() map[string]collect.Figures {
	out := map[string]collect.Figures{}
	for _, n := range Names() {
		out[n] = collect.Figures{Charts: ChartsOf(n), KeyMetrics: collect.KeyMetrics(CollectOf(n))}
	}
	return out
}

// RestartMeasurer is a kind whose throwaway instances `fathom instance restart
// --measure` restarts once and times until they answer: seconds, and what the server
// loaded, for people ("loading 1.2 MB from AOF (1000 keys, 1.10M in memory)").
type RestartMeasurer interface {
	MeasureRestart(ctx context.Context, inst *instance.Instance) (seconds float64, loaded string, err error)
}

// RestartMeasurers lists the titles of the kinds that are RestartMeasurers, for
// messages ("Redis").
func RestartMeasurers() []string {
	var out []string
	for _, n := range Names() {
		if _, ok := registry[n].(RestartMeasurer); ok {
			out = append(out, registry[n].Title())
		}
	}
	return out
}
