package instance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Driver is what a kind of server must provide for fathom to run throwaway instances
// of it. This package holds the generic machinery (directory layout, processes,
// secrets, ports, listing); each kind's driver lives in the kind's directory
// (internal/db/KIND/instance) and registers itself with Register. An instance read
// from disk finds its driver by the kind name stored in instance.json.
type Driver interface {
	// Kind is the name stored in instance.json (instance.Postgres).
	Kind() Kind
	// Aliases are the other spellings ParseKind accepts ("pg", "postgresql").
	Aliases() []string
	// Title is the server's name for people ("PostgreSQL").
	Title() string
	// Account is the operating system user the server runs as when fathom is root.
	Account() string
	// Programs are the programs a --bin directory must hold, in the order they are
	// checked; the last is the server, which reports the version.
	Programs() []string
	// Find locates the installed programs: their directory and the server's version
	// (the newest, or the one matching version).
	Find(version string) (bin, ver string, err error)
	// SocketPath is the unix socket of an instance in dir listening on port.
	SocketPath(dir string, port int) string
	// Superuser is the database user fathom connects as.
	Superuser() string
	// SecretFile names the file in the instance directory that holds the password, in
	// the format the server's clients read; Secret renders it and Password reads the
	// password back from its text.
	SecretFile() string
	Secret(i *Instance, password string) string
	Password(text string) string
	// CheckSetting refuses a setting the configuration file cannot hold (beyond the
	// generic name and one-line checks and Reserved).
	CheckSetting(s Setting) error
	// Reserved are the settings (as NormalizeName spells them) that fathom writes
	// itself: where the server listens and keeps its files. A user's value for one
	// would send the server elsewhere than fathom and its clients look.
	Reserved() []string
	// Initialize creates the data directory (and the password).
	Initialize(ctx context.Context, i *Instance) error
	// Config renders the configuration file fathom owns: its path and text.
	Config(i *Instance) (path, text string)
	// Start starts the server and waits until it accepts connections; Stop stops it
	// (data kept); Reload has a running server re-read its configuration, where it can.
	Start(ctx context.Context, i *Instance) error
	Stop(ctx context.Context, i *Instance) error
	Reload(ctx context.Context, i *Instance) error
	// PIDFile holds the running server's process id.
	PIDFile(i *Instance) string
	// DSN is how fathom connects (secret: the password file, or "" when there is none).
	DSN(i *Instance, secret string) string
	// Clients says how the server's own clients reach the instance from a hook.
	Clients(i *Instance) Clients
	// Catalog lists the settings the programs in bin accept, without a server.
	Catalog(bin string) (map[string]SettingInfo, error)
	// NormalizeName is the canonical spelling of a setting name.
	NormalizeName(name string) string
}

// Clients is how the server's own clients (psql, mariadb, redis-cli …) reach an
// instance from a hook, whatever the host's option files, service files and
// environment say (Instance.HookEnv).
type Clients struct {
	// Env are the variables that point them at the instance and log them in.
	Env []string
	// Unset are inherited variables that would point them elsewhere (a service file,
	// an option file's directory): hooks do not get them.
	Unset []string
	// Wrap are programs that must be given leading arguments, because the host's
	// option files beat every variable (MariaDB's socket in /etc/mysql/my.cnf beats
	// MYSQL_UNIX_PORT; only --defaults-file keeps them out): hooks find a small
	// wrapper of each first on their PATH. Arguments the hook gives come after and
	// still win.
	Wrap map[string][]string
	// Yield are sh case patterns of a first argument with which the hook chooses its
	// own option files (--no-defaults, --defaults-file=*): the wrapper then passes the
	// arguments as they are, since the client accepts that choice only first.
	Yield []string
	// Command is how a person reaches the instance by hand with the server's own
	// client, safely whatever the host's files say (`fathom instance start` prints it).
	Command string
}

// TimedStarter is a driver that can say how long a start took until the server
// answered (MeasureRestart).
type TimedStarter interface {
	StartTimed(ctx context.Context, i *Instance) (time.Duration, error)
}

// driverList gives the registered database kinds' instance drivers. Each is data of
// its kind's bundle; internal/db hands its registry in with UseDrivers, so that
// instance keeps no list of its own and a kind registers nothing here.
var driverList atomic.Pointer[func() []Driver]

// UseDrivers makes list the source of the drivers: internal/db calls it with its
// registry's, a test of a package below db with the drivers it needs.
func UseDrivers(list func() []Driver) { driverList.Store(&list) }

// registered lists the drivers, by kind.
func registered() []Driver {
	var out []Driver
	if f := driverList.Load(); f != nil {
		out = slices.Clone((*f)())
	}
	slices.SortFunc(out, func(a, b Driver) int { return strings.Compare(string(a.Kind()), string(b.Kind())) })
	return out
}

// kindNames lists the registered kinds for messages ("postgres, mariadb or redis").
func kindNames() string {
	var names []string
	for _, d := range registered() {
		names = append(names, string(d.Kind()))
	}
	switch len(names) {
	case 0:
		return "none is registered"
	case 1:
		return "use " + names[0]
	}
	return "use " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// driver is kind k's driver.
func driver(k Kind) (Driver, error) {
	for _, d := range registered() {
		if d.Kind() == k {
			return d, nil
		}
	}
	return nil, fmt.Errorf("unknown instance kind %q: %s", k, kindNames())
}

// Driver is the instance's driver (Open and Create check that there is one).
func (i *Instance) Driver() Driver {
	d, err := driver(i.Kind)
	if err != nil {
		panic(err)
	}
	return d
}

// ParseKind accepts the usual spellings of a registered kind.
func ParseKind(s string) (Kind, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, d := range registered() {
		if name == string(d.Kind()) || slices.Contains(d.Aliases(), name) {
			return d.Kind(), nil
		}
	}
	return "", fmt.Errorf("unknown instance kind %q: %s", s, kindNames())
}

// ErrNotRedis is returned by MeasureRestart for instances whose driver cannot time a
// start (all but Redis).
var ErrNotRedis = errors.New("a measured restart is for Redis instances")

// MeasureRestart stops a running instance and starts it again, returning how long the
// start took until the server answered: for Redis, the time to load its data set from
// the AOF (appendonly yes) or the RDB file.
func (i *Instance) MeasureRestart(ctx context.Context) (time.Duration, error) {
	ts, ok := i.Driver().(TimedStarter)
	if !ok {
		return 0, ErrNotRedis
	}
	if err := i.Stop(ctx); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, i.StartTimeout())
	defer cancel()
	return ts.StartTimed(ctx, i)
}

// TitleOf is the server's name for people of instances of kind k ("PostgreSQL"), or
// the kind itself when no driver for it is linked in.
func TitleOf(k Kind) string {
	if d, err := driver(k); err == nil {
		return d.Title()
	}
	return string(k)
}
