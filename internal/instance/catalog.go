package instance

import (
	"fmt"
	"strings"
	"sync"
)

// SettingInfo describes a server setting as the server's programs know it, without a
// running server.
type SettingInfo struct {
	Name string
	// Context is PostgreSQL's pg_settings.context (postmaster, sighup, user …); empty
	// for MariaDB, whose programs do not say which variables are dynamic; Immutable for
	// a Redis setting CONFIG SET refuses.
	Context string
	// Type is PostgreSQL's type (BOOLEAN, INTEGER, REAL, STRING, ENUM) or "".
	Type string
}

// Restart reports whether changing the setting needs a server restart, as far as the
// programs tell (MariaDB: unknown, false).
func (s SettingInfo) Restart() bool { return s.Context == "postmaster" || s.Context == Immutable }

// Immutable is the Context of a setting that only the configuration file sets (Redis).
const Immutable = "immutable"

// ReadOnly reports whether the setting cannot be set at all.
func (s SettingInfo) ReadOnly() bool { return s.Context == "internal" }

var catalogs sync.Map // Kind+"/"+version -> map[string]SettingInfo

// Catalog lists the settings the server programs of kind (and version) accept, by
// name, without starting a server (see each driver's Catalog).
func Catalog(k Kind, version string) (map[string]SettingInfo, error) {
	return CatalogIn(k, "", version)
}

// CatalogIn is Catalog for the programs in dir ("": the installed ones, as Catalog),
// as Options.Bin.
func CatalogIn(k Kind, dir, version string) (map[string]SettingInfo, error) {
	key := string(k) + "/" + version + "/" + dir
	if c, ok := catalogs.Load(key); ok {
		return c.(map[string]SettingInfo), nil
	}
	srv, err := driver(k)
	if err != nil {
		return nil, err
	}
	var bin string
	if dir != "" {
		bin, _, err = findIn(srv, dir, version)
	} else {
		bin, _, err = srv.Find(version)
	}
	if err != nil {
		return nil, err
	}
	c, err := srv.Catalog(bin)
	if err != nil {
		return nil, err
	}
	if len(c) == 0 {
		return nil, fmt.Errorf("listing %s settings: the server program printed none", k)
	}
	catalogs.Store(key, c)
	return c, nil
}

// NormalizeName returns the canonical spelling of a setting name for kind (MariaDB's
// variables use '_' where option files also allow '-'); lower case for a kind without
// a driver.
func NormalizeName(k Kind, name string) string {
	if d, err := driver(k); err == nil {
		return d.NormalizeName(name)
	}
	return strings.ToLower(name)
}
