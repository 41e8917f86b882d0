package redis

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/target"
)

// Redis's settings for experiments: CONFIG SET on a running server (and redis.conf on
// an instance), read back with CONFIG GET. What CONFIG SET changed is lost when the
// server restarts; fathom never runs CONFIG REWRITE on a server it does not own.

// Settings is the kind's settings capability (plan.Settings).
func (Kind) Settings() plan.Settings { return settings{} }

type settings struct{}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// immutable are the settings CONFIG SET refuses ("can't set immutable config"): only
// redis.conf or the command line sets them, so changing one needs a restart. From
// CONFIG SET of every setting to its own value on Redis 7.0 (TestImmutableSettings).
var immutable = map[string]bool{
	"aclfile": true, "always-show-logo": true, "aof_rewrite_cpulist": true, "appenddirname": true,
	"appendfilename": true, "bgsave_cpulist": true, "bio_cpulist": true, "cluster-config-file": true,
	"cluster-enabled": true, "cluster-port": true, "daemonize": true, "databases": true,
	"disable-thp": true, "enable-debug-command": true, "enable-module-command": true,
	"enable-protected-configs": true, "io-threads": true, "io-threads-do-reads": true, "logfile": true,
	"pidfile": true, "rdbchecksum": true, "replicaof": true, "server_cpulist": true, "set-proc-title": true,
	"slaveof": true, "socket-mark-id": true, "supervised": true, "syslog-enabled": true,
	"syslog-facility": true, "syslog-ident": true, "tcp-backlog": true, "unixsocket": true,
	"unixsocketperm": true,
}

// protected are the settings CONFIG SET refuses unless enable-protected-configs allows it.
var protected = map[string]bool{"dir": true, "dbfilename": true}

func (settings) InstanceKind() instance.Kind { return instance.Redis }
func (settings) ValidName(name string) bool  { return nameRE.MatchString(name) }
func (settings) LiveAction() string          { return "set" }
func (settings) ReloadManaged() bool         { return false }

// fixed reports whether CONFIG SET on this server refuses name.
func fixed(ctx context.Context, conn target.Conn, name string) (bool, error) {
	if immutable[name] {
		return true, nil
	}
	if !protected[name] {
		return false, nil
	}
	v, err := configGet(ctx, conn, "enable-protected-configs")
	if err != nil {
		return false, err
	}
	return v == "" || v == "no", nil
}

func (settings) NeedsRestart(ctx context.Context, conn target.Conn, names []string) (string, error) {
	for _, n := range names {
		f, err := fixed(ctx, conn, n)
		if err != nil || f {
			return n, err
		}
	}
	return "", nil
}

// configGet is one setting's value, or "" when the server has no such setting.
func configGet(ctx context.Context, conn target.Conn, name string) (string, error) {
	m, err := configGetAll(ctx, conn, name)
	return m[name], err
}

// SetLive changes settings with CONFIG SET (a removed one back to what it was before
// fathom changed it). One CONFIG SET refuses as immutable is *plan.RestartNeeded.
func (settings) SetLive(ctx context.Context, conn target.Conn, server string, val map[string]string, changed, removed []string, orig map[string]*plan.Original) error {
	isRemoved := map[string]bool{}
	for _, n := range removed {
		isRemoved[n] = true
	}
	for _, n := range changed {
		v, ok := val[n], true
		if isRemoved[n] {
			o := orig[n]
			ok = o != nil && o.Known
			if ok {
				v = o.Value
			}
		}
		if !ok {
			// A managed instance's setting removed from redis.conf: the server keeps the
			// value until it restarts; Redis has no CONFIG RESET for one setting.
			continue
		}
		if err := conn.Exec(ctx, "CONFIG SET "+n+" "+quote(v)); err != nil {
			msg := err.Error()
			if strings.Contains(msg, "immutable") || strings.Contains(msg, "protected") {
				return &plan.RestartNeeded{Setting: n}
			}
			return fmt.Errorf("%s: CONFIG SET %s %s: %v", server, n, v, err)
		}
	}
	return nil
}

// quote makes v one word of a command line. A value written in quotes, as redis.conf
// wants an empty one (save ""), is the text inside them.
func quote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(unquote(v)) + `"`
}

func unquote(v string) string {
	t := strings.TrimSpace(v)
	if len(t) >= 2 && (t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0] {
		return t[1 : len(t)-1]
	}
	return v
}

// Persist: CONFIG SET lasts until the server restarts, so settings are set live unless
// one of them cannot be (the plan's restart command applies it then, and AfterRestart
// sets the others again). An immutable setting the server already has at the wanted
// value needs nothing (putting back one whose change had failed).
func (s settings) Persist(ctx context.Context, conn target.Conn, server string, val map[string]string, changed, removed []string, orig map[string]*plan.Original, restarting bool) (string, error) {
	var toChange []string
	for _, n := range changed {
		want, ok := val[n]
		if slices.Contains(removed, n) {
			o := orig[n]
			want, ok = "", o != nil && o.Known
			if ok {
				want = o.Value
			}
		}
		if f, err := fixed(ctx, conn, n); err != nil {
			return "", err
		} else if f && ok {
			if cur, err := configGet(ctx, conn, n); err == nil && sameValue(want, cur) {
				continue
			}
		}
		toChange = append(toChange, n)
	}
	if n, err := s.NeedsRestart(ctx, conn, toChange); err != nil || n != "" {
		return n, err
	}
	if restarting {
		return "", nil
	}
	return "", s.SetLive(ctx, conn, server, val, toChange, removed, orig)
}

// AfterRestart sets the settings CONFIG SET can change again (after an external restart).
func (settings) AfterRestart(ctx context.Context, conn target.Conn, server string, kvs []plan.KV) error {
	for _, kv := range kvs {
		if f, err := fixed(ctx, conn, kv.Name); err != nil || f {
			if err != nil {
				return err
			}
			continue
		}
		if err := conn.Exec(ctx, "CONFIG SET "+kv.Name+" "+quote(kv.Value)); err != nil {
			return fmt.Errorf("%s: CONFIG SET %s: %v", server, kv.Name, err)
		}
	}
	return nil
}

// Original is the setting's value from CONFIG GET.
func (settings) Original(ctx context.Context, conn target.Conn, name string) plan.Original {
	var o plan.Original
	if v, err := configGet(ctx, conn, name); err == nil {
		o.Known, o.Present, o.Value = true, true, v
	}
	return o
}

func (settings) Read(ctx context.Context, conn target.Conn, kv plan.KV) (plan.Effective, error) {
	e := plan.Effective{Name: kv.Name, Requested: kv.Value}
	rc, err := configGetAll(ctx, conn, kv.Name)
	if err != nil {
		return e, err
	}
	v, ok := rc[kv.Name]
	if !ok {
		e.Note = "the server has no such setting (CONFIG GET returns nothing)"
		return e, nil
	}
	e.Value = v
	e.OK = sameValue(kv.Value, v)
	return e, nil
}

func configGetAll(ctx context.Context, conn target.Conn, pattern string) (map[string]string, error) {
	rows, err := conn.Query(ctx, "CONFIG GET ?", target.Text([]byte(pattern)))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	switch {
	case len(rows) > 0 && len(rows[0]) == 2: // RESP3: a map
		for _, r := range rows {
			out[r[0]] = r[1]
		}
	default: // RESP2: a flat array, one element a row
		for i := 0; i+1 < len(rows); i += 2 {
			if len(rows[i]) == 1 && len(rows[i+1]) == 1 {
				out[rows[i][0]] = rows[i+1][0]
			}
		}
	}
	return out, nil
}

// Catalog lists CONFIG GET *: a setting CONFIG SET refuses is marked immutable
// (changing it needs a restart).
func (settings) Catalog(ctx context.Context, conn target.Conn) (plan.SettingsCatalog, string, error) {
	all, err := configGetAll(ctx, conn, "*")
	if err != nil {
		return nil, "", err
	}
	cat := plan.SettingsCatalog{}
	for n := range all {
		info := instance.SettingInfo{Name: n}
		if f, err := fixed(ctx, conn, n); err == nil && f {
			info.Context = instance.Immutable
		}
		cat[n] = info
	}
	name := "Redis"
	if rows, err := conn.Query(ctx, "INFO server"); err == nil {
		for _, r := range rows {
			for _, text := range r {
				for line := range strings.SplitSeq(text, "\n") {
					if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
						name += " " + v
					}
				}
			}
		}
	}
	return cat, name, nil
}

// sameValue reports whether a requested value and the value CONFIG GET returns are the
// same setting: case and spacing aside, memory sizes in Redis's units (1gb is
// 1073741824, 1g is 1000000000), and yes/no for booleans.
func sameValue(requested, actual string) bool {
	r, a := strings.Join(strings.Fields(strings.ToLower(unquote(requested))), " "), strings.Join(strings.Fields(strings.ToLower(actual)), " ")
	if r == a {
		return true
	}
	if rb, ok := parseMemory(r); ok {
		if ab, ok := parseMemory(a); ok {
			return rb == ab
		}
	}
	return false
}

// memUnits are redis.conf's memory units: k, m, g are powers of 1000; kb, mb, gb of 1024.
var memUnits = map[string]float64{"": 1, "b": 1, "k": 1e3, "kb": 1 << 10, "m": 1e6, "mb": 1 << 20, "g": 1e9, "gb": 1 << 30}

func parseMemory(s string) (float64, bool) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || (i == 0 && s[i] == '-')) {
		i++
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	m, ok := memUnits[strings.TrimSpace(s[i:])]
	return n * m, ok
}
