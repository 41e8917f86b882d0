package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/target"
)

// PostgreSQL's settings for experiments: ALTER SYSTEM on an external server, the
// configuration file and a reload on an instance; read back from pg_settings.

// Settings is the kind's settings capability (plan.Settings).
func (Kind) Settings() plan.Settings { return settings{} }

type settings struct{}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

func (settings) InstanceKind() instance.Kind { return instance.Postgres }
func (settings) ValidName(name string) bool  { return nameRE.MatchString(name) }
func (settings) LiveAction() string          { return "reloaded" }
func (settings) ReloadManaged() bool         { return true }

func (settings) NeedsRestart(ctx context.Context, conn target.Conn, names []string) (string, error) {
	for _, n := range names {
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
	}
	return "", nil
}

func (s settings) SetLive(ctx context.Context, conn target.Conn, server string, val map[string]string, changed, removed []string, orig map[string]*plan.Original) error {
	_, err := s.Persist(ctx, conn, server, val, changed, removed, orig, false)
	return err
}

// Persist writes settings with ALTER SYSTEM and reloads; it returns a changed setting
// that needs a restart, if any.
func (settings) Persist(ctx context.Context, conn target.Conn, server string, val map[string]string, changed, removed []string, orig map[string]*plan.Original, _ bool) (string, error) {
	isRemoved := map[string]bool{}
	for _, n := range removed {
		isRemoved[n] = true
	}
	need := ""
	for _, n := range changed {
		stmt := "ALTER SYSTEM SET " + n + " = " + literal(val[n])
		if isRemoved[n] {
			stmt = "ALTER SYSTEM RESET " + n
			if o := orig[n]; o != nil && o.Present {
				stmt = "ALTER SYSTEM SET " + n + " = " + literal(o.Value)
			}
		}
		if err := conn.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("%s: %s: %v", server, stmt, err)
		}
		rows, err := conn.Query(ctx, "SELECT context FROM pg_catalog.pg_settings WHERE name = $1", target.Text([]byte(n)))
		if err == nil && len(rows) == 1 && rows[0][0] == "postmaster" && need == "" {
			need = n
		}
	}
	if err := conn.Exec(ctx, "SELECT pg_catalog.pg_reload_conf()"); err != nil {
		return "", fmt.Errorf("%s: reloading the configuration: %v", server, err)
	}
	return need, nil
}

func literal(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }

func (settings) AfterRestart(context.Context, target.Conn, string, []plan.KV) error { return nil }

// Original is the setting's value in postgresql.auto.conf, if it is there.
func (settings) Original(ctx context.Context, conn target.Conn, name string) plan.Original {
	var o plan.Original
	rows, err := conn.Query(ctx, `SELECT setting FROM pg_catalog.pg_file_settings WHERE name = $1 AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1`, target.Text([]byte(name)))
	if err == nil {
		o.Known = true
		if len(rows) > 0 {
			o.Present, o.Value = true, rows[0][0]
		}
	}
	return o
}

func (settings) Read(ctx context.Context, conn target.Conn, kv plan.KV) (plan.Effective, error) {
	e := plan.Effective{Name: kv.Name, Requested: kv.Value}
	rows, err := conn.Query(ctx, "SELECT setting, coalesce(unit, ''), vartype, current_setting(name), pending_restart FROM pg_catalog.pg_settings WHERE name = $1",
		target.Text([]byte(kv.Name)))
	if err != nil {
		return e, err
	}
	if len(rows) == 0 {
		e.Note = "the server has no such setting"
		return e, nil
	}
	r := rows[0]
	e.Value = r[3]
	e.OK = plan.SamePostgresValue(kv.Value, r[0], r[1], r[2])
	if !e.OK && r[4] == "t" {
		e.Note = fmt.Sprintf("requested %q but the server still uses %q until it restarts", kv.Value, r[3])
	}
	return e, nil
}

// Catalog reads pg_settings.
func (settings) Catalog(ctx context.Context, conn target.Conn) (plan.SettingsCatalog, string, error) {
	cat := plan.SettingsCatalog{}
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
