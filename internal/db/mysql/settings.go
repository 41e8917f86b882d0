package mysql

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/target"
)

// MySQL's and MariaDB's settings for experiments: SET GLOBAL on a running server (and
// the configuration file on an instance), read back from @@GLOBAL.

// Settings is the kind's settings capability (plan.Settings).
func (Kind) Settings() plan.Settings { return settings{} }

type settings struct{}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (settings) InstanceKind() instance.Kind { return instance.MariaDB }
func (settings) ValidName(name string) bool  { return nameRE.MatchString(name) }
func (settings) LiveAction() string          { return "set" }
func (settings) ReloadManaged() bool         { return false }

func (settings) NeedsRestart(ctx context.Context, conn target.Conn, names []string) (string, error) {
	for _, n := range names {
		rows, err := conn.Query(ctx, "SELECT READ_ONLY FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = ?", target.Text([]byte(strings.ToUpper(n))))
		if err != nil {
			if target.ClassOf(err) == target.ClassUndefined || isCode(err, "1109") {
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

func isCode(err error, code string) bool {
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
	if n, u, ok := plan.SplitNumber(t); ok && n == float64(int64(n)) {
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

// SetLive changes variables with SET GLOBAL. A read-only one is an error naming it
// (*plan.RestartNeeded).
func (settings) SetLive(ctx context.Context, conn target.Conn, server string, val map[string]string, changed, removed []string, orig map[string]*plan.Original) error {
	isRemoved := map[string]bool{}
	for _, n := range removed {
		isRemoved[n] = true
	}
	for _, n := range changed {
		v := "DEFAULT"
		if !isRemoved[n] {
			v = mysqlValue(val[n])
		} else if o := orig[n]; o != nil && o.Known {
			v = mysqlValue(o.Value)
		}
		if err := conn.Exec(ctx, "SET GLOBAL "+n+" = "+v); err != nil {
			if isCode(err, "1238") {
				return &plan.RestartNeeded{Setting: n}
			}
			return fmt.Errorf("%s: SET GLOBAL %s = %s: %v", server, n, v, err)
		}
	}
	return nil
}

// Persist: MySQL keeps nothing across a restart that was only SET GLOBAL, so the
// settings are set live unless one of them needs the restart (the restart command
// applies them then, and AfterRestart sets the dynamic ones again).
func (s settings) Persist(ctx context.Context, conn target.Conn, server string, val map[string]string, changed, removed []string, orig map[string]*plan.Original, restarting bool) (string, error) {
	if n, err := s.NeedsRestart(ctx, conn, changed); err != nil || n != "" {
		return n, err
	}
	if restarting {
		return "", nil
	}
	err := s.SetLive(ctx, conn, server, val, changed, removed, orig)
	var rn *plan.RestartNeeded
	if errors.As(err, &rn) {
		return rn.Setting, nil
	}
	return "", err
}

// AfterRestart sets the dynamic ones among settings again (after an external restart).
func (settings) AfterRestart(ctx context.Context, conn target.Conn, server string, settings []plan.KV) error {
	for _, kv := range settings {
		err := conn.Exec(ctx, "SET GLOBAL "+kv.Name+" = "+mysqlValue(kv.Value))
		if err != nil && !isCode(err, "1238") {
			return fmt.Errorf("%s: SET GLOBAL %s: %v", server, kv.Name, err)
		}
	}
	return nil
}

// Original is @@GLOBAL's value.
func (settings) Original(ctx context.Context, conn target.Conn, name string) plan.Original {
	var o plan.Original
	rows, err := conn.Query(ctx, "SELECT @@GLOBAL."+name)
	if err == nil && len(rows) == 1 {
		o.Known, o.Present, o.Value = true, true, rows[0][0]
	}
	return o
}

func (settings) Read(ctx context.Context, conn target.Conn, kv plan.KV) (plan.Effective, error) {
	e := plan.Effective{Name: kv.Name, Requested: kv.Value}
	rows, err := conn.Query(ctx, "SELECT @@GLOBAL."+kv.Name)
	switch {
	case isCode(err, "1193"):
		// An option that is not a variable (log_bin's file name, skip_* …): the server
		// started with it, which is all that can be checked.
		e.OK, e.Value, e.Note = true, kv.Value, "an option without a variable: not read back"
		if kv.Name == "log_bin" {
			e.OK = false
		}
	case err != nil:
		return e, err
	case len(rows) == 1:
		e.Value = rows[0][0]
		e.OK = plan.SameMySQLValue(kv.Value, e.Value)
	}
	if kv.Name == "log_bin" && err == nil && len(rows) == 1 {
		// log_bin=NAME turns the binary log on; the variable says ON.
		e.OK = e.Value == "1" || strings.EqualFold(e.Value, "ON") || plan.SameMySQLValue(kv.Value, e.Value)
	}
	return e, nil
}

// Catalog reads the global variables.
func (settings) Catalog(ctx context.Context, conn target.Conn) (plan.SettingsCatalog, string, error) {
	cat := plan.SettingsCatalog{}
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
