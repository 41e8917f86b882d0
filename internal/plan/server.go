package plan

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// Server is where a cell's runs go: a managed instance or an external server. It
// applies a cell's settings (configuration file and restart or reload on an instance;
// ALTER SYSTEM or SET GLOBAL, and the plan's restart command, on an external server)
// and reads back what took effect.
type Server struct {
	Inst *instance.Instance // nil for an external server

	kind       string // postgres or mysql
	set        Settings
	open       Opener
	dsn        string // never printed
	redacted   string
	restartCmd string
	dir        string   // where the restart command runs
	env        []string // for the restart command

	applied  []KV                 // the settings in effect (as applied by fathom)
	touched  map[string]bool      // external: settings fathom changed
	original map[string]*Original // external: what to restore
}

// Opener opens a target from a DSN (the engine passes the kinds registry's, db.Open).
type Opener func(dsn string, cfg target.Config) (target.Target, error)

// NewManaged wraps an instance of a kind whose settings set handles; open opens its
// DSN.
func NewManaged(inst *instance.Instance, kind string, set Settings, open Opener) *Server {
	return &Server{Inst: inst, kind: kind, set: set, open: open, dsn: inst.DSN(), redacted: inst.DSN()}
}

// NewExternal is a server fathom does not manage, reached at dsn. restartCmd (may be
// empty) restarts it; it runs in dir with env added. kind is the DSN's kind; open opens
// the DSN.
func NewExternal(kind string, set Settings, open Opener, dsn, redacted, restartCmd, dir string, env []string) *Server {
	return &Server{kind: kind, set: set, open: open, dsn: dsn, redacted: redacted, restartCmd: restartCmd, dir: dir, env: env,
		touched: map[string]bool{}, original: map[string]*Original{}}
}

// DSN is how to connect (it may hold a password: never print it).
func (s *Server) DSN() string { return s.dsn }

// Name is the server for messages: the instance's name or the redacted DSN.
func (s *Server) Name() string {
	if s.Inst != nil {
		return "instance " + s.Inst.Name
	}
	return s.redacted
}

// Redacted is the DSN without password.
func (s *Server) Redacted() string { return s.redacted }

// Connect opens one connection for settings, hooks and checks.
func (s *Server) Connect(ctx context.Context) (target.Conn, error) {
	t, err := s.open(s.dsn, target.Config{ConnectTimeout: 10 * time.Second, AppName: "fathom"})
	if err != nil {
		return nil, err
	}
	c, err := t.Connect(ctx)
	if err != nil {
		t.Close()
		return nil, err
	}
	return &closingConn{Conn: c, t: t}, nil
}

// closingConn closes its target with the connection (SQLite holds the file).
type closingConn struct {
	target.Conn
	t target.Target
}

func (c *closingConn) Close() error {
	err := c.Conn.Close()
	c.t.Close()
	return err
}

// change says what Apply did.
type change struct {
	Action string // unchanged, started, reloaded, set, restarted
	Why    string // for restarted: the setting that needed it, or "restart: each"
}

func (c change) String() string {
	if c.Why != "" {
		return c.Action + " (" + c.Why + ")"
	}
	return c.Action
}

func (s *Server) checkName(name string) error {
	if !s.set.ValidName(name) {
		return fmt.Errorf("setting %q: not a setting name", name)
	}
	return nil
}

// normalize canonicalises the settings' names for the server.
func (s *Server) normalize(settings []KV) ([]KV, error) {
	if len(settings) > 0 && s.set == nil {
		return nil, fmt.Errorf("kind %s has no settings support", s.kind)
	}
	out := make([]KV, 0, len(settings))
	for _, kv := range settings {
		kv.Name = instance.NormalizeName(s.set.InstanceKind(), kv.Name)
		if err := s.checkName(kv.Name); err != nil {
			return nil, err
		}
		out = append(out, kv)
	}
	return out, nil
}

// diff returns the names whose value differs between the applied settings and want
// (added, changed or removed), sorted, and the removed ones.
func diff(applied, want []KV) (changed, removed []string) {
	a := map[string]string{}
	for _, kv := range applied {
		a[kv.Name] = kv.Value
	}
	w := map[string]string{}
	for _, kv := range want {
		w[kv.Name] = kv.Value
		if v, ok := a[kv.Name]; !ok || v != kv.Value {
			changed = append(changed, kv.Name)
		}
	}
	for n := range a {
		if _, ok := w[n]; !ok {
			changed = append(changed, n)
			removed = append(removed, n)
		}
	}
	sort.Strings(changed)
	sort.Strings(removed)
	return changed, removed
}

func toInstance(settings []KV) []instance.Setting {
	out := make([]instance.Setting, len(settings))
	for i, kv := range settings {
		out[i] = instance.Setting{Name: kv.Name, Value: kv.Value}
	}
	return out
}

// Apply makes settings the server's settings: starts a stopped instance with them, or
// changes a running server's, restarting it when a changed setting needs that or when
// restartEach is set. On an external server the plan's restart command restarts it.
func (s *Server) Apply(ctx context.Context, settings []KV, restartEach bool) (change, error) {
	settings, err := s.normalize(settings)
	if err != nil {
		return change{}, err
	}
	if s.Inst != nil {
		return s.applyManaged(ctx, settings, restartEach)
	}
	return s.applyExternal(ctx, settings, restartEach)
}

func (s *Server) applyManaged(ctx context.Context, settings []KV, restartEach bool) (change, error) {
	inst := s.Inst
	if !inst.Running() {
		if err := inst.Configure(toInstance(settings)); err != nil {
			return change{}, err
		}
		if err := inst.Start(ctx); err != nil {
			return change{}, err
		}
		s.applied = settings
		var names []string
		for _, kv := range settings {
			names = append(names, kv.Name)
		}
		if late := actsAtShutdown(s.kind, names); len(late) > 0 {
			// A fresh server has never stopped: one restart makes the
			// shutdown-and-startup the setting acts on, under the cell's value.
			if err := inst.Restart(ctx); err != nil {
				return change{}, err
			}
			return change{Action: "started and restarted", Why: strings.Join(late, ", ") + " acts at shutdown"}, nil
		}
		return change{Action: "started"}, nil
	}
	changed, removed := diff(s.applied, settings)
	if len(changed) == 0 && !restartEach {
		return change{Action: "unchanged"}, nil
	}
	why := "restart: each"
	needRestart := restartEach
	if !needRestart {
		n, err := s.needsRestart(ctx, changed)
		if err != nil {
			return change{}, err
		}
		if n != "" {
			needRestart, why = true, n+" needs a restart"
		}
	}
	if err := inst.Configure(toInstance(settings)); err != nil {
		return change{}, err
	}
	if late := actsAtShutdown(s.kind, changed); len(late) > 0 {
		// The restart that applies a shutdown-time setting stops the server under the
		// old value; a second one stops it under the cell's own.
		if err := inst.Restart(ctx); err != nil {
			return change{}, err
		}
		if err := inst.Restart(ctx); err != nil {
			return change{}, err
		}
		s.applied = settings
		return change{Action: "restarted twice", Why: strings.Join(late, ", ") + " acts at shutdown"}, nil
	}
	if needRestart {
		if err := inst.Restart(ctx); err != nil {
			return change{}, err
		}
		s.applied = settings
		return change{Action: "restarted", Why: why}, nil
	}
	if s.set.ReloadManaged() {
		if err := inst.Reload(ctx); err != nil {
			return change{}, err
		}
		s.applied = settings
		return change{Action: s.set.LiveAction()}, nil
	}
	if err := s.withConn(ctx, func(conn target.Conn) error {
		return s.set.SetLive(ctx, conn, s.Name(), values(settings), changed, removed, s.original)
	}); err != nil {
		return change{}, err
	}
	s.applied = settings
	return change{Action: s.set.LiveAction()}, nil
}

// withConn runs f on a new connection to the server.
func (s *Server) withConn(ctx context.Context, f func(target.Conn) error) error {
	conn, err := s.Connect(ctx)
	if err != nil {
		return fmt.Errorf("%s: %v", s.Name(), err)
	}
	defer conn.Close()
	return f(conn)
}

func values(settings []KV) map[string]string {
	val := map[string]string{}
	for _, kv := range settings {
		val[kv.Name] = kv.Value
	}
	return val
}

// needsRestart returns the first of names that cannot change without a restart, or "".
func (s *Server) needsRestart(ctx context.Context, names []string) (string, error) {
	if len(names) == 0 {
		return "", nil
	}
	var n string
	err := s.withConn(ctx, func(conn target.Conn) (err error) {
		n, err = s.set.NeedsRestart(ctx, conn, names)
		return err
	})
	return n, err
}

// RestartNeeded is a setting that cannot change without a restart.
type RestartNeeded struct{ Setting string }

func (e *RestartNeeded) Error() string {
	return fmt.Sprintf("setting %s needs a server restart: give restart_command in the plan (how to restart this server)", e.Setting)
}

func (s *Server) applyExternal(ctx context.Context, settings []KV, restartEach bool) (change, error) {
	changed, removed := diff(s.applied, settings)
	if len(changed) == 0 && !restartEach {
		return change{Action: "unchanged"}, nil
	}
	if err := s.remember(ctx, changed); err != nil {
		return change{}, err
	}
	need := ""
	if restartEach {
		need = "restart: each"
	}
	var n string
	if err := s.withConn(ctx, func(conn target.Conn) (err error) {
		n, err = s.set.Persist(ctx, conn, s.Name(), values(settings), changed, removed, s.original, need != "")
		return err
	}); err != nil {
		return change{}, err
	}
	if n != "" && need == "" {
		need = n + " needs a restart"
	}
	for _, n := range changed {
		s.touched[n] = true
	}
	if need == "" {
		s.applied = settings
		return change{Action: s.set.LiveAction()}, nil
	}
	late := actsAtShutdown(s.kind, changed)
	if len(late) > 0 && need == "" {
		need = strings.Join(late, ", ") + " acts at shutdown"
	}
	if err := s.restart(ctx, settings, need); err != nil {
		return change{}, err
	}
	action := "restarted"
	if len(late) > 0 {
		// The first restart stopped the server under the old value.
		if err := s.restart(ctx, settings, need); err != nil {
			return change{}, err
		}
		action, need = "restarted twice", strings.Join(late, ", ")+" acts at shutdown"
	}
	if !restartEach {
		// What a restart loses (MySQL's dynamic settings, unless the restart command
		// applies them) is set again.
		if err := s.withConn(ctx, func(conn target.Conn) error {
			return s.set.AfterRestart(ctx, conn, s.Name(), settings)
		}); err != nil {
			return change{}, err
		}
	}
	s.applied = settings
	return change{Action: action, Why: need}, nil
}

// remember records, before fathom first changes a setting on an external server, what
// to restore afterwards.
func (s *Server) remember(ctx context.Context, names []string) error {
	var todo []string
	for _, n := range names {
		if _, ok := s.original[n]; !ok {
			todo = append(todo, n)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	return s.withConn(ctx, func(conn target.Conn) error {
		for _, n := range todo {
			o := s.set.Original(ctx, conn, n)
			s.original[n] = &o
		}
		return nil
	})
}

// restart runs the plan's restart command and waits for the server to accept
// connections again.
func (s *Server) restart(ctx context.Context, settings []KV, why string) error {
	if s.restartCmd == "" {
		return fmt.Errorf("%s: %s, and the plan has no restart_command to restart this server", s.Name(), why)
	}
	var lines []string
	for _, kv := range settings {
		lines = append(lines, kv.Name+"="+kv.Value)
	}
	env := append(append([]string(nil), s.env...), "FATHOM_SETTINGS="+strings.Join(lines, "\n"), "FATHOM_RESTART_REASON="+why)
	res := RunShell(ctx, s.restartCmd, s.dir, env, 10*time.Minute)
	if !res.OK {
		res.Phase, res.Index = "restart_command", 1
		return errors.New(res.Failure())
	}
	return s.waitUp(ctx, 2*time.Minute)
}

// waitUp waits until the server accepts connections.
func (s *Server) waitUp(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		conn, err := s.Connect(ctx)
		if err == nil {
			conn.Close()
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s is not accepting connections %s after the restart command: %v", s.Name(), timeout, last)
}

// Restore puts back the settings fathom changed on an external server (ALTER SYSTEM
// values or RESET; SET GLOBAL to the values read before), restarting with the plan's
// restart command when one of them needs it.
func (s *Server) Restore(ctx context.Context) error {
	if s.Inst != nil || len(s.touched) == 0 {
		return nil
	}
	var names []string
	for n := range s.touched {
		names = append(names, n)
	}
	sort.Strings(names)
	var want []KV
	for _, n := range names {
		if o := s.original[n]; o != nil && o.Known && o.Present {
			want = append(want, KV{Name: n, Value: o.Value})
		}
	}
	// Removing every touched setting from what is applied and asking for the originals
	// puts them back; one without an original goes back to the default (PostgreSQL:
	// RESET; MySQL: DEFAULT).
	s.applied = nil
	for _, n := range names {
		s.applied = append(s.applied, KV{Name: n, Value: "\x00fathom"})
	}
	_, err := s.applyExternal(ctx, want, false)
	return err
}

// Effective is a setting's value as the server reports it.
type Effective struct {
	Server    string `json:"server"` // the instance or redacted DSN it was read from
	Name      string `json:"name"`
	Requested string `json:"requested"`
	Value     string `json:"value"` // as SHOW (PostgreSQL) or @@GLOBAL (MySQL) gives it
	OK        bool   `json:"ok"`
	Note      string `json:"note,omitempty"`
}

// Verify reads settings back from the server. It waits up to wait for a reload to
// take effect. Any setting whose effective value is not the requested one is an error
// (*NotInEffect) listing each of them.
func (s *Server) Verify(ctx context.Context, settings []KV, wait time.Duration) ([]Effective, error) {
	settings, err := s.normalize(settings)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		effs, err := s.read(ctx, settings)
		if err != nil {
			return nil, err
		}
		var bad []Effective
		for _, e := range effs {
			if !e.OK {
				bad = append(bad, e)
			}
		}
		if len(bad) == 0 {
			return effs, nil
		}
		if time.Now().After(deadline) {
			nie := &notInEffect{Server: s.Name(), Settings: bad}
			if s.Inst != nil {
				nie.Log = s.Inst.LogTail(8)
			}
			return effs, nie
		}
		select {
		case <-ctx.Done():
			return effs, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// notInEffect lists settings the server did not take.
type notInEffect struct {
	Server   string
	Settings []Effective
	Log      string
}

func (e *notInEffect) Error() string {
	var parts []string
	for _, s := range e.Settings {
		if s.Note != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", s.Name, s.Note))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s requested %q but the server uses %q", s.Name, s.Requested, s.Value))
	}
	msg := fmt.Sprintf("settings not in effect on %s: %s", e.Server, strings.Join(parts, "; "))
	if e.Log != "" {
		msg += "\n  last lines of its log:\n    " + strings.ReplaceAll(e.Log, "\n", "\n    ")
	}
	return msg
}

func (s *Server) read(ctx context.Context, settings []KV) ([]Effective, error) {
	if len(settings) == 0 {
		return nil, nil
	}
	out := make([]Effective, 0, len(settings))
	err := s.withConn(ctx, func(conn target.Conn) error {
		for _, kv := range settings {
			e, err := s.set.Read(ctx, conn, kv)
			if err != nil {
				return err
			}
			e.Server = s.Name()
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Catalog reads the settings a running server has, for checking a plan before it runs
// (pg_settings, or MySQL's global variables), and names the server ("PostgreSQL 17").
func (s *Server) Catalog(ctx context.Context) (SettingsCatalog, string, error) {
	if s.set == nil {
		return nil, "", fmt.Errorf("kind %s has no settings support", s.kind)
	}
	conn, err := s.Connect(ctx)
	if err != nil {
		return nil, "", err
	}
	defer conn.Close()
	return s.set.Catalog(ctx, conn)
}
