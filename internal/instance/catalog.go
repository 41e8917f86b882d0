package instance

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// SettingInfo describes a server setting as the server's programs know it, without a
// running server.
type SettingInfo struct {
	Name string
	// Context is PostgreSQL's pg_settings.context (postmaster, sighup, user …); empty
	// for MariaDB, whose programs do not say which variables are dynamic.
	Context string
	// Type is PostgreSQL's type (BOOLEAN, INTEGER, REAL, STRING, ENUM) or "".
	Type string
}

// Restart reports whether changing the setting needs a server restart, as far as the
// programs tell (MariaDB: unknown, false).
func (s SettingInfo) Restart() bool { return s.Context == "postmaster" }

// ReadOnly reports whether the setting cannot be set at all.
func (s SettingInfo) ReadOnly() bool { return s.Context == "internal" }

var catalogs sync.Map // Kind+"/"+version -> map[string]SettingInfo

// Catalog lists the settings the server programs of kind (and PostgreSQL version)
// accept, by name (MariaDB names with '_', not '-'), without starting a server:
// `postgres --describe-config` or `mariadbd --verbose --help`.
func Catalog(k Kind, version string) (map[string]SettingInfo, error) {
	key := string(k) + "/" + version
	if c, ok := catalogs.Load(key); ok {
		return c.(map[string]SettingInfo), nil
	}
	srv, err := server(k)
	if err != nil {
		return nil, err
	}
	bin, _, err := srv.find(version)
	if err != nil {
		return nil, err
	}
	var c map[string]SettingInfo
	switch k {
	case Postgres:
		out, err := exec.Command(filepath.Join(bin, "postgres"), "--describe-config").Output()
		if err != nil {
			return nil, fmt.Errorf("listing PostgreSQL's settings: %v", err)
		}
		c = parsePGCatalog(out)
	default:
		out, err := exec.Command(filepath.Join(bin, "mariadbd"), "--no-defaults", "--verbose", "--help").Output()
		if err != nil && len(out) == 0 {
			return nil, fmt.Errorf("listing MariaDB's variables: %v", err)
		}
		c = parseMariaCatalog(out)
	}
	if len(c) == 0 {
		return nil, fmt.Errorf("listing %s settings: the server program printed none", k)
	}
	catalogs.Store(key, c)
	return c, nil
}

func parsePGCatalog(out []byte) map[string]SettingInfo {
	c := map[string]SettingInfo{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 4 || f[0] == "" {
			continue
		}
		c[f[0]] = SettingInfo{Name: f[0], Context: f[1], Type: f[3]}
	}
	return c
}

func parseMariaCatalog(out []byte) map[string]SettingInfo {
	c := map[string]SettingInfo{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if !in {
			if strings.HasPrefix(line, "-----") {
				in = true
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			break
		}
		name := strings.ReplaceAll(f[0], "-", "_")
		c[name] = SettingInfo{Name: name}
	}
	return c
}

// NormalizeName returns the canonical spelling of a setting name for kind: MariaDB's
// variables use '_' where option files also allow '-'.
func NormalizeName(k Kind, name string) string {
	if k == MariaDB {
		return strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	}
	return strings.ToLower(name)
}
