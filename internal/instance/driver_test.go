package instance_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	. "github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/instance/instancetest"
)

// fakeDriver is a kind this package knows nothing about, listed beside the registered
// kinds' drivers the way internal/db lists them: its "server" is sleep, started as a daemon with a
// pid file, so that the generic machinery (layout, secret, config, processes,
// listing, lookup by the stored kind) is tested without a database.
type fakeDriver struct{}

func init() {
	UseDrivers(func() []Driver { return append(db.InstanceDrivers(), fakeDriver{}) })
}

const fakeKind Kind = "fake"

func (fakeDriver) Kind() Kind                              { return fakeKind }
func (fakeDriver) Aliases() []string                       { return []string{"pretend"} }
func (fakeDriver) Title() string                           { return "Fake" }
func (fakeDriver) Account() string                         { return "postgres" }
func (fakeDriver) Programs() []string                      { return []string{"sleep"} }
func (fakeDriver) Find(string) (string, string, error)     { return "/usr/bin", "1.0", nil }
func (fakeDriver) SocketPath(dir string, port int) string  { return filepath.Join(dir, "fake.sock") }
func (fakeDriver) Superuser() string                       { return "admin" }
func (fakeDriver) SecretFile() string                      { return "fake.pass" }
func (fakeDriver) Secret(_ *Instance, pw string) string    { return "# fake\n" + pw + "\n" }
func (fakeDriver) PIDFile(i *Instance) string              { return filepath.Join(i.Path, "fake.pid") }
func (fakeDriver) Reload(context.Context, *Instance) error { return nil }
func (fakeDriver) NormalizeName(n string) string           { return strings.ToUpper(n) }
func (fakeDriver) Reserved() []string                      { return []string{"PORT"} }
func (fakeDriver) Clients(i *Instance) Clients {
	return Clients{Env: []string{"FAKE_PORT=" + strconv.Itoa(i.Port)}, Unset: []string{"FAKE_SERVICE"}}
}
func (fakeDriver) Initialize(_ context.Context, i *Instance) error {
	pw, err := NewPassword()
	if err != nil {
		return err
	}
	return i.WriteSecret(pw)
}

func (fakeDriver) Password(text string) string {
	_, pw, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return pw
}

func (fakeDriver) CheckSetting(s Setting) error {
	if s.Name == "password" {
		return errors.New("setting password: fathom sets it itself")
	}
	return nil
}

func (fakeDriver) Config(i *Instance) (string, string) {
	text := fmt.Sprintf("port %d\n", i.Port)
	for _, s := range i.Settings {
		text += s.Name + " " + s.Value + "\n"
	}
	return filepath.Join(i.Path, "fake.conf"), text
}

func (fakeDriver) DSN(i *Instance, secret string) string {
	return fmt.Sprintf("fake://127.0.0.1:%d?passfile=%s", i.Port, QueryPath(secret))
}

func (fakeDriver) Catalog(string) (map[string]SettingInfo, error) {
	return map[string]SettingInfo{"speed": {Name: "speed"}}, nil
}

func (d fakeDriver) Start(ctx context.Context, i *Instance) error {
	return i.StartOnFreePort(func() error {
		p, err := i.StartProcess(i.Daemon("/usr/bin/sleep", "300"))
		if err != nil {
			return err
		}
		return os.WriteFile(d.PIDFile(i), []byte(strconv.Itoa(p.Pid())+"\n"), 0o600)
	}, func(error) bool { return false })
}

func (fakeDriver) Stop(ctx context.Context, i *Instance) error {
	_, err := i.StopProcess(ctx, "sleep", 10*time.Second)
	return err
}

// TestRegisteredDriver: a kind is its driver in the list instance is given; nothing in
// this package names it.
func TestRegisteredDriver(t *testing.T) {
	if k, err := ParseKind(" Pretend "); err != nil || k != fakeKind {
		t.Fatalf("ParseKind(alias) = %q, %v", k, err)
	}
	if _, err := ParseKind("oracle"); err == nil || !strings.Contains(err.Error(), "fake, mariadb, postgres or redis") {
		t.Errorf("unknown kind: %v", err)
	}
	if got := NormalizeName(fakeKind, "speed"); got != "SPEED" {
		t.Errorf("NormalizeName = %q: not the driver's", got)
	}
	if c, err := Catalog(fakeKind, ""); err != nil || len(c) != 1 {
		t.Errorf("Catalog = %v, %v", c, err)
	}
	ctx := context.Background()
	base := instancetest.Dir(t)
	if _, err := Create(ctx, Options{Kind: fakeKind, Name: "refused", Dir: base, Settings: []Setting{{Name: "password", Value: "x"}}}); err == nil || !strings.Contains(err.Error(), "sets it itself") {
		t.Errorf("the driver's setting check was not applied: %v", err)
	}
	inst, err := Create(ctx, Options{Kind: fakeKind, Name: "f1", Dir: base, Settings: []Setting{{Name: "speed", Value: "3"}}, Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if inst.User != "admin" || inst.Socket != filepath.Join(inst.Path, "fake.sock") || inst.Version != "1.0" {
		t.Errorf("instance from the driver: user %q socket %q version %q", inst.User, inst.Socket, inst.Version)
	}
	conf, err := os.ReadFile(filepath.Join(inst.Path, "fake.conf"))
	if err != nil || string(conf) != fmt.Sprintf("port %d\nspeed 3\n", inst.Port) {
		t.Errorf("config: %q %v", conf, err)
	}
	pw := inst.Password()
	if len(pw) != 32 || strings.Contains(inst.DSN(), pw) || !strings.Contains(inst.DSN(), "passfile=") {
		t.Errorf("password %d characters, DSN %s", len(pw), inst.DSN())
	}
	if fi, err := os.Stat(inst.SecretFile()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file: %v %v", fi, err)
	}
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pid := inst.PID()
	if !inst.Running() || pid <= 0 || !ProcessAlive(pid) {
		t.Fatalf("not running after Start (pid %d)", pid)
	}
	env, err := inst.HookEnv([]string{"FAKE_SERVICE=prod", "FAKE_PORT=1", "HOME=/h"}, t.TempDir())
	if err != nil || strings.Join(env, " ") != "HOME=/h FAKE_PORT="+strconv.Itoa(inst.Port)+" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" {
		t.Errorf("HookEnv = %v, %v", env, err)
	}
	if _, err := inst.MeasureRestart(ctx); !errors.Is(err, ErrNotRedis) {
		t.Errorf("MeasureRestart of a driver that cannot time a start: %v", err)
	}
	// Found again from disk by its stored kind.
	list, err := List(base)
	if err != nil || len(list) != 1 || list[0].Kind != fakeKind || !list[0].Running() {
		t.Fatalf("List = %v, %v", list, err)
	}
	if err := list[0].Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if ProcessAlive(pid) {
		t.Fatal("still running after Stop")
	}
	if err := list[0].Remove(ctx); err != nil {
		t.Fatal(err)
	}
	// An instance whose kind has no driver in this binary is refused in one line.
	dir := filepath.Join(base, "alien")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "instance.json"), []byte(`{"kind":"oracle","name":"alien"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), `unknown instance kind "oracle"`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Open of an unknown kind: %v", err)
	}
}
