// Package instance starts throwaway local database servers for experiments, each in
// its own work directory, on a free port and its own socket, never touching the
// machine's default servers, ports, data or configuration. What differs between kinds
// of server (initdb + pg_ctl, mariadb-install-db + mariadbd, redis-server …) is a
// Driver that the kind's directory (internal/db/KIND/instance) registers; this package
// holds the generic machinery and never imports a kind.
//
// An instance is described by instance.json in its directory, so that instances
// started by hand (`fathom instance start`) can be listed and stopped later. As root,
// the server runs as its driver's account (PostgreSQL refuses to run as root), and
// the instance directory is given to that user.
package instance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/safefile"
)

// Kind is the kind of server: the name its Driver registers.
type Kind string

// The kinds of managed servers whose drivers fathom has (internal/db/KIND/instance).
// The names are what instance.json and plans store; a kind is usable once its
// driver is registered.
const (
	Postgres Kind = "postgres"
	MariaDB  Kind = "mariadb"
	Redis    Kind = "redis"
)

// Setting is a server setting and its value as written in a configuration file.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Options say what instance to create.
type Options struct {
	Kind Kind
	// Name is the instance's directory under Dir: letters, digits, '.', '_' and '-'.
	Name string
	// Dir is the base directory of instances (default DefaultDir()).
	Dir string
	// Version selects a PostgreSQL major version ("" is the newest installed).
	Version string
	// Bin is a directory holding the server's programs (PostgreSQL: initdb, pg_ctl and
	// postgres, as in a package's bin directory or an unpacked binary distribution;
	// MariaDB: mariadbd), used instead of searching the usual places. Version, when
	// also given, must match what those programs report.
	Bin string
	// Settings are written to the instance's configuration before it first starts.
	Settings []Setting
	// StartTimeout bounds each start (default 60s).
	StartTimeout time.Duration
	// Owner says who started the instance (e.g. "experiment 12"), for listings.
	Owner string
	// Env is the environment the server's tools start from (Instance.Env).
	Env []string
	// Ports is where the instance's port must be (PortOf, ParsePorts); nil: any free
	// port.
	Ports *Ports
	// Listen are IP addresses the server listens on besides 127.0.0.1 (PostgreSQL
	// only), for clients on other hosts such as agents; nil: loopback only.
	Listen []string
}

// Instance is one managed server. Its exported fields are what instance.json holds.
type Instance struct {
	Kind     Kind      `json:"kind"`
	Name     string    `json:"name"`
	Path     string    `json:"path"` // the instance's directory
	Version  string    `json:"version"`
	Port     int       `json:"port"`
	Socket   string    `json:"socket"` // unix socket file
	Database string    `json:"database"`
	User     string    `json:"user"` // database superuser (no password; local connections only)
	Owner    string    `json:"owner,omitempty"`
	Created  time.Time `json:"created"`
	// Settings are those currently written to the configuration.
	Settings []Setting `json:"settings"`
	// RunAs is the operating system user the server runs as ("" = fathom's user).
	RunAs string `json:"run_as,omitempty"`
	// Bin is the directory of the server's programs.
	Bin string `json:"bin"`
	// Ports is the port or range it was asked to keep to (nil: any free port).
	Ports *Ports `json:"ports,omitempty"`
	// Listen are the addresses it listens on besides 127.0.0.1.
	Listen []string `json:"listen,omitempty"`

	// Env is the environment the server's tools start from, as the front end read it
	// (the variables that point them elsewhere are dropped); nil: a default PATH only.
	// Not stored: whoever opens the instance sets it.
	Env []string `json:"-"`

	startTimeout time.Duration
	proc         *process // the server process when this fathom started it (MariaDB, Redis)
}

// Names of files inside an instance directory.
const (
	metaFile = "instance.json"
	logFile  = "server.log"
	dataDir  = "data"
)

// DefaultDir is where instances live unless told otherwise: a directory in the
// system's temporary directory, which every local user (postgres, mysql) can reach;
// one per user but root, so that users do not share (or trip over) each other's.
func DefaultDir() string {
	if uid := os.Geteuid(); uid != 0 {
		return filepath.Join(os.TempDir(), "fathom-instances-"+strconv.Itoa(uid))
	}
	return filepath.Join(os.TempDir(), "fathom-instances")
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// ValidName reports whether s can name an instance.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// maxSocketPath is the longest unix socket path the kernel accepts (sun_path less NUL).
const maxSocketPath = 107

// Create makes a new instance: a data directory initialised by the server's own tool
// and a configuration with a free port, its own socket and opts.Settings. It does not
// start the server. On failure nothing is left behind.
func Create(ctx context.Context, opts Options) (inst *Instance, err error) {
	if !ValidName(opts.Name) {
		return nil, fmt.Errorf("instance name %q: use letters, digits, '.', '_' and '-' (at most 63)", opts.Name)
	}
	base := opts.Dir
	if base == "" {
		base = DefaultDir()
	}
	base, err = filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	srv, err := driver(opts.Kind)
	if err != nil {
		return nil, err
	}
	for _, st := range opts.Settings {
		if err := checkSetting(srv, st); err != nil {
			return nil, err
		}
	}
	for _, a := range opts.Listen {
		if opts.Kind != Postgres {
			return nil, fmt.Errorf("listen addresses besides 127.0.0.1: PostgreSQL instances only")
		}
		if ip := net.ParseIP(a); ip == nil {
			return nil, fmt.Errorf("listen address %q: give an IP address", a)
		}
	}
	var bin, version string
	if opts.Bin != "" {
		bin, version, err = findIn(srv, opts.Bin, opts.Version)
	} else {
		bin, version, err = srv.Find(opts.Version)
	}
	if err != nil {
		return nil, err
	}
	acct, err := serviceAccount(srv)
	if err != nil {
		return nil, err
	}
	if err := checkBase(base); err != nil {
		return nil, err
	}
	if acct != nil {
		if err := acct.canReach(base); err != nil {
			return nil, err
		}
		if opts.Bin != "" {
			if err := acct.canReach(bin); err != nil {
				return nil, err
			}
		}
	}
	path := filepath.Join(base, opts.Name)
	if len(srv.SocketPath(path, 65535)) > maxSocketPath {
		return nil, fmt.Errorf("instance directory %s is too long for a unix socket path (at most %d bytes): use a shorter --dir", path, maxSocketPath)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("an instance named %s already exists in %s: stop it with `fathom instance stop %s` or choose another name", opts.Name, base, opts.Name)
		}
		return nil, fmt.Errorf("instance directory: %v", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(path)
		}
	}()
	inst = &Instance{
		Kind: opts.Kind, Name: opts.Name, Path: path, Version: version, Bin: bin,
		Database: "fathom", Owner: opts.Owner, Created: time.Now().UTC(), Env: opts.Env,
		Settings: append([]Setting(nil), opts.Settings...), startTimeout: opts.StartTimeout, Ports: opts.Ports,
		Listen: slices.Clone(opts.Listen),
	}
	if acct != nil {
		inst.RunAs = acct.name
		if err := os.Chown(path, acct.uid, acct.gid); err != nil {
			return nil, fmt.Errorf("instance directory: %v", err)
		}
	}
	if inst.Port, err = freePort(opts.Ports); err != nil {
		return nil, err
	}
	inst.Socket = srv.SocketPath(path, inst.Port)
	inst.User = srv.Superuser()
	if err := srv.Initialize(ctx, inst); err != nil {
		return nil, err
	}
	if err := inst.WriteConfig(); err != nil {
		return nil, err
	}
	if err := inst.save(); err != nil {
		return nil, err
	}
	return inst, nil
}

// Open reads the instance in directory path (written by Create).
func Open(path string) (*Instance, error) {
	b, err := os.ReadFile(filepath.Join(path, metaFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a fathom instance (no %s)", path, metaFile)
		}
		return nil, err
	}
	var inst Instance
	if err := json.Unmarshal(b, &inst); err != nil {
		return nil, fmt.Errorf("%s: corrupt %s: %v", path, metaFile, err)
	}
	if _, err := driver(inst.Kind); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	inst.Path = path
	return &inst, nil
}

// openChecked is Open for an instance found by name or listing: its directory must
// be fathom's user's (or the server account's, as root) and not writable by others.
func openChecked(path string) (*Instance, error) {
	if err := safefile.Check(path, baseOwners()...); err != nil {
		return nil, err
	}
	if err := safefile.Check(filepath.Join(path, metaFile), baseOwners()...); err != nil {
		return nil, err
	}
	return Open(path)
}

// Find opens the instance named name in base (default DefaultDir()).
func Find(base, name string) (*Instance, error) {
	if base == "" {
		base = DefaultDir()
	}
	if !ValidName(name) {
		return nil, fmt.Errorf("no instance named %q in %s: see `fathom instance list`", name, base)
	}
	if err := safefile.Check(base); err != nil {
		return nil, fmt.Errorf("instance directory: %v (or give --dir)", err)
	}
	inst, err := openChecked(filepath.Join(base, name))
	if err != nil {
		if errors.Is(err, safefile.ErrUnsafe) {
			return nil, err
		}
		return nil, fmt.Errorf("no instance named %q in %s: see `fathom instance list`", name, base)
	}
	return inst, nil
}

// List returns the instances in base (default DefaultDir()), by name.
func List(base string) ([]*Instance, error) {
	if base == "" {
		base = DefaultDir()
	}
	if err := safefile.Check(base); err != nil {
		return nil, fmt.Errorf("instance directory: %v (or give --dir)", err)
	}
	ents, err := os.ReadDir(base)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []*Instance
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if inst, err := openChecked(filepath.Join(base, e.Name())); err == nil {
			out = append(out, inst)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (i *Instance) save() error {
	b, err := json.MarshalIndent(i, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteFile(filepath.Join(i.Path, metaFile), append(b, '\n'))
}

// DSN is how fathom connects to the instance: its superuser over TCP on 127.0.0.1.
// The password is not in it: the DSN names the file that holds it (PostgreSQL's
// passfile=, MariaDB's defaults-file=), which only fathom's user can read, so the DSN
// is safe to print, log and store. Instances made before passwords have none.
func (i *Instance) DSN() string { return i.Driver().DSN(i, i.SecretFile()) }

// QueryPath escapes a file path for a URL query, keeping its slashes readable.
func QueryPath(p string) string { return strings.ReplaceAll(url.QueryEscape(p), "%2F", "/") }

// DataDir is the server's data directory.
func (i *Instance) DataDir() string { return filepath.Join(i.Path, dataDir) }

// LogFile is the server's log.
func (i *Instance) LogFile() string { return filepath.Join(i.Path, logFile) }

// StartTimeout is how long a start may take.
func (i *Instance) StartTimeout() time.Duration {
	if i.startTimeout > 0 {
		return i.startTimeout
	}
	return 60 * time.Second
}

// SetStartTimeout bounds later starts.
func (i *Instance) SetStartTimeout(d time.Duration) { i.startTimeout = d }

// Configure replaces the instance's settings in its configuration file. They apply at
// the next start, or (where the server allows) after Reload.
func (i *Instance) Configure(settings []Setting) error {
	for _, s := range settings {
		if err := checkSetting(i.Driver(), s); err != nil {
			return err
		}
	}
	i.Settings = append([]Setting(nil), settings...)
	if err := i.WriteConfig(); err != nil {
		return err
	}
	return i.save()
}

// WriteConfig writes the configuration file fathom owns from the instance's port,
// socket and settings.
func (i *Instance) WriteConfig() error {
	srv := i.Driver()
	for _, s := range i.Settings {
		if err := checkSetting(srv, s); err != nil {
			return err
		}
	}
	path, text := srv.Config(i)
	if err := safefile.WriteFile(path, []byte(text), baseOwners()...); err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	_ = i.GiveToAccount(path)
	return i.refreshSecret()
}

// CheckSettings refuses settings an instance of kind k cannot take (before anything
// slow: Create checks them again).
func CheckSettings(k Kind, settings []Setting) error {
	d, err := driver(k)
	if err != nil {
		return err
	}
	for _, s := range settings {
		if err := checkSetting(d, s); err != nil {
			return err
		}
	}
	return nil
}

var settingNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

func checkSetting(d Driver, s Setting) error {
	if !settingNameRE.MatchString(s.Name) {
		return fmt.Errorf("setting name %q: use letters, digits, '_', '-' and '.'", s.Name)
	}
	if strings.ContainsAny(s.Value, "\n\r\x00") {
		return fmt.Errorf("setting %s: the value must be one line", s.Name)
	}
	if name := d.NormalizeName(s.Name); slices.Contains(d.Reserved(), name) {
		if name == d.NormalizeName("port") {
			return fmt.Errorf("setting %s: fathom sets an instance's port itself, where it and its clients look for the server: use --port N or --port-range A-B (in a plan, instance: {port: N} or {port_range: A-B})", s.Name)
		}
		return fmt.Errorf("setting %s: fathom sets it itself on an instance", s.Name)
	}
	return d.CheckSetting(s)
}

// Start starts the server and waits until it accepts connections. If it does not
// come up, the error is a *StartError with the tail of the server's log.
func (i *Instance) Start(ctx context.Context) error {
	if i.Running() {
		return nil
	}
	// An instance kept from an older fathom gets today's client file.
	if err := i.refreshSecret(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, i.StartTimeout())
	defer cancel()
	return i.Driver().Start(ctx, i)
}

// Stop stops the server (fast shutdown: connections are closed, data is kept).
func (i *Instance) Stop(ctx context.Context) error {
	return i.Driver().Stop(ctx, i)
}

// Restart stops and starts the server.
func (i *Instance) Restart(ctx context.Context) error {
	if err := i.Stop(ctx); err != nil {
		return err
	}
	return i.Start(ctx)
}

// Reload asks a running server to re-read its configuration (PostgreSQL). MariaDB
// has no reload; its dynamic settings are changed with SET GLOBAL.
func (i *Instance) Reload(ctx context.Context) error {
	return i.Driver().Reload(ctx, i)
}

// Running reports whether the server process is alive.
func (i *Instance) Running() bool {
	pid := i.PID()
	return pid > 0 && processAlive(pid)
}

// PID is the server's process id from its pid file, or 0.
func (i *Instance) PID() int {
	b, err := os.ReadFile(i.Driver().PIDFile(i))
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Remove stops the server if it runs and deletes the instance directory.
func (i *Instance) Remove(ctx context.Context) error {
	var stopErr error
	if i.Running() {
		stopErr = i.Stop(ctx)
	}
	if i.Running() {
		return fmt.Errorf("instance %s: server still running after stop (%v); not removing %s", i.Name, stopErr, i.Path)
	}
	if _, err := os.Stat(filepath.Join(i.Path, metaFile)); err != nil {
		return fmt.Errorf("refusing to remove %s: it has no %s", i.Path, metaFile)
	}
	if err := os.RemoveAll(i.Path); err != nil {
		return fmt.Errorf("removing instance %s: %v", i.Name, err)
	}
	return nil
}

// LogTail returns the last n lines of the server's log.
func (i *Instance) LogTail(n int) string { return tailFile(i.LogFile(), n) }

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	const max = 64 << 10
	if len(b) > max {
		b = b[len(b)-max:]
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// StartError is a server that did not come up, with the end of its log.
type StartError struct {
	Instance string
	Reason   string
	Log      string // last lines of the server's log
	LogFile  string
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("instance %s did not start: %s", e.Instance, e.Reason)
	if e.Log != "" {
		msg += "\n  last lines of " + e.LogFile + ":\n    " + strings.ReplaceAll(e.Log, "\n", "\n    ")
	}
	return msg
}

// StartError is the error for a server that did not come up, with its log's end.
func (i *Instance) StartError(reason string) *StartError {
	return &StartError{Instance: i.Name, Reason: reason, Log: Relevant(i.LogTail(40), 15), LogFile: i.LogFile()}
}

// Relevant keeps the last n lines of a log tail, leaving out MariaDB's [Note] lines
// when there are [ERROR] lines to show.
func Relevant(tail string, n int) string {
	lines := strings.Split(tail, "\n")
	if strings.Contains(tail, "[ERROR]") {
		kept := lines[:0]
		for _, l := range lines {
			if !strings.Contains(l, "[Note]") {
				kept = append(kept, l)
			}
		}
		lines = kept
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
