package plan

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targets"
)

// Server is where a cell's runs go: a managed instance or an external server. It
// applies a cell's settings (configuration file and restart or reload on an instance;
// ALTER SYSTEM or SET GLOBAL, and the plan's restart command, on an external server)
// and reads back what took effect.
type Server struct {
	Inst *instance.Instance // nil for an external server

	kind       string // postgres or mysql
	dsn        string // never printed
	redacted   string
	restartCmd string
	dir        string   // where the restart command runs
	env        []string // for the restart command

	applied  []KV             // the settings in effect (as applied by fathom)
	touched  map[string]bool  // external: settings fathom changed
	original map[string]*orig // external: what to restore
}

type orig struct {
	value   string // MySQL: @@GLOBAL value; PostgreSQL: postgresql.auto.conf value
	present bool   // PostgreSQL: the setting was in postgresql.auto.conf
	known   bool
}

// NewManaged wraps an instance.
func NewManaged(inst *instance.Instance) *Server {
	kind := "postgres"
	if inst.Kind == instance.MariaDB {
		kind = "mysql"
	}
	return &Server{Inst: inst, kind: kind, dsn: inst.DSN(), redacted: inst.DSN()}
}

// NewExternal is a server fathom does not manage, reached at dsn. restartCmd (may be
// empty) restarts it; it runs in dir with env added.
func NewExternal(dsn, redacted, restartCmd, dir string, env []string) *Server {
	return &Server{kind: dsnKind(dsn), dsn: dsn, redacted: redacted, restartCmd: restartCmd, dir: dir, env: env,
		touched: map[string]bool{}, original: map[string]*orig{}}
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

// Kind is postgres or mysql.
func (s *Server) Kind() string { return s.kind }

func (s *Server) ikind() instance.Kind {
	if s.kind == "mysql" {
		return instance.MariaDB
	}
	return instance.Postgres
}

// Connect opens one connection for settings, hooks and checks.
func (s *Server) Connect(ctx context.Context) (target.Conn, error) {
	t, err := targets.Open(s.dsn, target.Config{ConnectTimeout: 10 * time.Second, AppName: "fathom"})
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

// Change says what Apply did.
type Change struct {
	Action string // unchanged, started, reloaded, set, restarted
	Why    string // for restarted: the setting that needed it, or "restart: each"
}

func (c Change) String() string {
	if c.Why != "" {
		return c.Action + " (" + c.Why + ")"
	}
	return c.Action
}

var (
	pgNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)
	myNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func (s *Server) checkName(name string) error {
	re := pgNameRE
	if s.kind == "mysql" {
		re = myNameRE
	}
	if !re.MatchString(name) {
		return fmt.Errorf("setting %q: not a setting name", name)
	}
	return nil
}

// normalize canonicalises the settings' names for the server.
func (s *Server) normalize(settings []KV) ([]KV, error) {
	out := make([]KV, 0, len(settings))
	for _, kv := range settings {
		kv.Name = instance.NormalizeName(s.ikind(), kv.Name)
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
func (s *Server) Apply(ctx context.Context, settings []KV, restartEach bool) (Change, error) {
	settings, err := s.normalize(settings)
	if err != nil {
		return Change{}, err
	}
	if s.Inst != nil {
		return s.applyManaged(ctx, settings, restartEach)
	}
	return s.applyExternal(ctx, settings, restartEach)
}

func (s *Server) applyManaged(ctx context.Context, settings []KV, restartEach bool) (Change, error) {
	inst := s.Inst
	if !inst.Running() {
		if err := inst.Configure(toInstance(settings)); err != nil {
			return Change{}, err
		}
		if err := inst.Start(ctx); err != nil {
			return Change{}, err
		}
		s.applied = settings
		return Change{Action: "started"}, nil
	}
	changed, removed := diff(s.applied, settings)
	if len(changed) == 0 && !restartEach {
		return Change{Action: "unchanged"}, nil
	}
	why := "restart: each"
	needRestart := restartEach
	if !needRestart {
		n, err := s.needsRestart(ctx, changed)
		if err != nil {
			return Change{}, err
		}
		if n != "" {
			needRestart, why = true, n+" needs a restart"
		}
	}
	if err := inst.Configure(toInstance(settings)); err != nil {
		return Change{}, err
	}
	if needRestart {
		if err := inst.Restart(ctx); err != nil {
			return Change{}, err
		}
		s.applied = settings
		return Change{Action: "restarted", Why: why}, nil
	}
	if s.kind == "postgres" {
		if err := inst.Reload(ctx); err != nil {
			return Change{}, err
		}
		s.applied = settings
		return Change{Action: "reloaded"}, nil
	}
	if err := s.setGlobal(ctx, settings, changed, removed); err != nil {
		return Change{}, err
	}
	s.applied = settings
	return Change{Action: "set"}, nil
}

// needsRestart returns the first of names that cannot change without a restart, or "".
func (s *Server) needsRestart(ctx context.Context, names []string) (string, error) {
	if len(names) == 0 {
		return "", nil
	}
	conn, err := s.Connect(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %v", s.Name(), err)
	}
	defer conn.Close()
	for _, n := range names {
		if s.kind == "postgres" {
			rows, err := conn.Query(ctx, "SELECT context FROM pg_catalog.pg_settings WHERE name = $1", target.Text([]byte(n)))
			if err != nil {
				return "", err
			}
			if len(rows) == 0 {
				continue // unknown: the read-back reports it
			}
			if rows[0][0] == "postmaster" {
				return n, nil
			}
			continue
		}
		rows, err := conn.Query(ctx, "SELECT READ_ONLY FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = ?", target.Text([]byte(strings.ToUpper(n))))
		if err != nil {
			if target.ClassOf(err) == target.ClassUndefined || isMySQLCode(err, "1109") {
				// MySQL has no SYSTEM_VARIABLES: try SET GLOBAL and see.
				return "", nil
			}
			return "", err
		}
		if len(rows) == 0 || rows[0][0] == "YES" {
			return n, nil // an option that is not a variable, or a read-only variable
		}
	}
	return "", nil
}

func isMySQLCode(err error, code string) bool {
	var te *target.Error
	return errors.As(err, &te) && te.Code == code
}

// mysqlValue renders a value for SET GLOBAL: numbers bare (sizes with K/M/G turned into
// bytes), ON/OFF as keywords, anything else a quoted string.
func mysqlValue(v string) string {
	t := strings.TrimSpace(v)
	if _, err := strconv.ParseFloat(t, 64); err == nil {
		return t
	}
	if n, u, ok := splitNumber(t); ok && n == float64(int64(n)) {
		mult := map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[strings.ToUpper(u)]
		if mult > 0 {
			return strconv.FormatInt(int64(n)*mult, 10)
		}
	}
	switch strings.ToUpper(t) {
	case "ON", "OFF", "TRUE", "FALSE", "DEFAULT":
		return strings.ToUpper(t)
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(t) + "'"
}

// setGlobal changes MySQL variables on the running server. A read-only one is an
// error naming it (*RestartNeeded).
func (s *Server) setGlobal(ctx context.Context, settings []KV, changed, removed []string) error {
	val := map[string]string{}
	for _, kv := range settings {
		val[kv.Name] = kv.Value
	}
	isRemoved := map[string]bool{}
	for _, n := range removed {
		isRemoved[n] = true
	}
	conn, err := s.Connect(ctx)
	if err != nil {
		return fmt.Errorf("%s: %v", s.Name(), err)
	}
	defer conn.Close()
	for _, n := range changed {
		v := "DEFAULT"
		if !isRemoved[n] {
			v = mysqlValue(val[n])
		} else if o := s.original[n]; o != nil && o.known {
			v = mysqlValue(o.value)
		}
		if err := conn.Exec(ctx, "SET GLOBAL "+n+" = "+v); err != nil {
			if isMySQLCode(err, "1238") {
				return &RestartNeeded{Setting: n}
			}
			return fmt.Errorf("%s: SET GLOBAL %s = %s: %v", s.Name(), n, v, err)
		}
	}
	return nil
}

// RestartNeeded is a setting that cannot change without a restart.
type RestartNeeded struct{ Setting string }

func (e *RestartNeeded) Error() string {
	return fmt.Sprintf("setting %s needs a server restart: give restart_command in the plan (how to restart this server)", e.Setting)
}

func (s *Server) applyExternal(ctx context.Context, settings []KV, restartEach bool) (Change, error) {
	changed, removed := diff(s.applied, settings)
	if len(changed) == 0 && !restartEach {
		return Change{Action: "unchanged"}, nil
	}
	if err := s.remember(ctx, changed); err != nil {
		return Change{}, err
	}
	need := ""
	if restartEach {
		need = "restart: each"
	}
	if s.kind == "postgres" {
		n, err := s.alterSystem(ctx, settings, changed, removed)
		if err != nil {
			return Change{}, err
		}
		if n != "" && need == "" {
			need = n + " needs a restart"
		}
	} else {
		if n, err := s.needsRestart(ctx, changed); err != nil {
			return Change{}, err
		} else if n != "" && need == "" {
			need = n + " needs a restart"
		}
		if need == "" {
			err := s.setGlobal(ctx, settings, changed, removed)
			var rn *RestartNeeded
			if errors.As(err, &rn) {
				need = rn.Setting + " needs a restart"
			} else if err != nil {
				return Change{}, err
			}
		}
	}
	for _, n := range changed {
		s.touched[n] = true
	}
	if need == "" {
		s.applied = settings
		if s.kind == "postgres" {
			return Change{Action: "reloaded"}, nil
		}
		return Change{Action: "set"}, nil
	}
	if err := s.restart(ctx, settings, need); err != nil {
		return Change{}, err
	}
	if s.kind == "mysql" && !restartEach {
		// Dynamic ones are lost across a restart unless the restart command applies them.
		if err := s.setDynamic(ctx, settings); err != nil {
			return Change{}, err
		}
	}
	s.applied = settings
	return Change{Action: "restarted", Why: need}, nil
}

// setDynamic sets the dynamic ones among settings (after an external MySQL restart).
func (s *Server) setDynamic(ctx context.Context, settings []KV) error {
	var names []string
	for _, kv := range settings {
		names = append(names, kv.Name)
	}
	conn, err := s.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, kv := range settings {
		err := conn.Exec(ctx, "SET GLOBAL "+kv.Name+" = "+mysqlValue(kv.Value))
		if err != nil && !isMySQLCode(err, "1238") {
			return fmt.Errorf("%s: SET GLOBAL %s: %v", s.Name(), kv.Name, err)
		}
	}
	return nil
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
	conn, err := s.Connect(ctx)
	if err != nil {
		return fmt.Errorf("%s: %v", s.Name(), err)
	}
	defer conn.Close()
	for _, n := range todo {
		o := &orig{}
		if s.kind == "postgres" {
			rows, err := conn.Query(ctx, `SELECT setting FROM pg_catalog.pg_file_settings WHERE name = $1 AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1`, target.Text([]byte(n)))
			if err == nil {
				o.known = true
				if len(rows) > 0 {
					o.present, o.value = true, rows[0][0]
				}
			}
		} else {
			rows, err := conn.Query(ctx, "SELECT @@GLOBAL."+n)
			if err == nil && len(rows) == 1 {
				o.known, o.value = true, rows[0][0]
			}
		}
		s.original[n] = o
	}
	return nil
}

// alterSystem writes settings with ALTER SYSTEM and reloads; it returns a changed
// setting that needs a restart, if any.
func (s *Server) alterSystem(ctx context.Context, settings []KV, changed, removed []string) (string, error) {
	val := map[string]string{}
	for _, kv := range settings {
		val[kv.Name] = kv.Value
	}
	isRemoved := map[string]bool{}
	for _, n := range removed {
		isRemoved[n] = true
	}
	conn, err := s.Connect(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %v", s.Name(), err)
	}
	defer conn.Close()
	need := ""
	for _, n := range changed {
		stmt := "ALTER SYSTEM SET " + n + " = " + pgLiteral(val[n])
		if isRemoved[n] {
			stmt = "ALTER SYSTEM RESET " + n
			if o := s.original[n]; o != nil && o.present {
				stmt = "ALTER SYSTEM SET " + n + " = " + pgLiteral(o.value)
			}
		}
		if err := conn.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("%s: %s: %v", s.Name(), stmt, err)
		}
		rows, err := conn.Query(ctx, "SELECT context FROM pg_catalog.pg_settings WHERE name = $1", target.Text([]byte(n)))
		if err == nil && len(rows) == 1 && rows[0][0] == "postmaster" && need == "" {
			need = n
		}
	}
	if err := conn.Exec(ctx, "SELECT pg_catalog.pg_reload_conf()"); err != nil {
		return "", fmt.Errorf("%s: reloading the configuration: %v", s.Name(), err)
	}
	return need, nil
}

func pgLiteral(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }

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
		if o := s.original[n]; o != nil && o.known && (s.kind == "mysql" || o.present) {
			want = append(want, KV{Name: n, Value: o.value})
		}
	}
	// Removing every touched setting from what is applied makes Apply put back the
	// originals (PostgreSQL: RESET or the old ALTER SYSTEM value; MySQL: old values).
	s.applied = nil
	for _, n := range names {
		s.applied = append(s.applied, KV{Name: n, Value: "\x00fathom"})
	}
	if s.kind == "mysql" {
		_, err := s.applyExternal(ctx, want, false)
		return err
	}
	_, err := s.applyExternal(ctx, nil, false)
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
			nie := &NotInEffect{Server: s.Name(), Settings: bad}
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

// NotInEffect lists settings the server did not take.
type NotInEffect struct {
	Server   string
	Settings []Effective
	Log      string
}

func (e *NotInEffect) Error() string {
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
	conn, err := s.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", s.Name(), err)
	}
	defer conn.Close()
	out := make([]Effective, 0, len(settings))
	for _, kv := range settings {
		e := Effective{Server: s.Name(), Name: kv.Name, Requested: kv.Value}
		if s.kind == "postgres" {
			rows, err := conn.Query(ctx, "SELECT setting, coalesce(unit, ''), vartype, current_setting(name), pending_restart FROM pg_catalog.pg_settings WHERE name = $1",
				target.Text([]byte(kv.Name)))
			if err != nil {
				return nil, err
			}
			if len(rows) == 0 {
				e.Note = "the server has no such setting"
			} else {
				r := rows[0]
				e.Value = r[3]
				e.OK = SameValue("postgres", kv.Value, r[0], r[1], r[2])
				if !e.OK && r[4] == "t" {
					e.Note = fmt.Sprintf("requested %q but the server still uses %q until it restarts", kv.Value, r[3])
				}
			}
		} else {
			rows, err := conn.Query(ctx, "SELECT @@GLOBAL."+kv.Name)
			switch {
			case isMySQLCode(err, "1193"):
				// An option that is not a variable (log_bin's file name, skip_* …):
				// the server started with it, which is all that can be checked.
				e.OK, e.Value, e.Note = true, kv.Value, "an option without a variable: not read back"
				if kv.Name == "log_bin" {
					e.OK = false
				}
			case err != nil:
				return nil, err
			case len(rows) == 1:
				e.Value = rows[0][0]
				e.OK = SameValue("mysql", kv.Value, e.Value, "", "")
			}
			if kv.Name == "log_bin" && err == nil && len(rows) == 1 {
				// log_bin=NAME turns the binary log on; the variable says ON.
				e.OK = e.Value == "1" || strings.EqualFold(e.Value, "ON") || SameValue("mysql", kv.Value, e.Value, "", "")
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Catalog reads the settings a running server has, for checking a plan before it runs:
// pg_settings, or MySQL's global variables.
func (s *Server) Catalog(ctx context.Context) (SettingsCatalog, string, error) {
	conn, err := s.Connect(ctx)
	if err != nil {
		return nil, "", err
	}
	defer conn.Close()
	cat := SettingsCatalog{}
	if s.kind == "postgres" {
		rows, err := conn.Query(ctx, "SELECT name, context, vartype FROM pg_catalog.pg_settings")
		if err != nil {
			return nil, "", err
		}
		for _, r := range rows {
			cat[r[0]] = instance.SettingInfo{Name: r[0], Context: r[1], Type: r[2]}
		}
		v, _ := conn.Query(ctx, "SHOW server_version")
		name := "PostgreSQL"
		if len(v) == 1 {
			name += " " + strings.Fields(v[0][0])[0]
		}
		return cat, name, nil
	}
	rows, err := conn.Query(ctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return nil, "", err
	}
	for _, r := range rows {
		n := strings.ToLower(r[0])
		cat[n] = instance.SettingInfo{Name: n}
	}
	name := "MySQL"
	if v, err := conn.Query(ctx, "SELECT @@version"); err == nil && len(v) == 1 {
		if strings.Contains(strings.ToLower(v[0][0]), "mariadb") {
			name = "MariaDB"
		}
		name += " " + v[0][0]
	}
	return cat, name, nil
}
