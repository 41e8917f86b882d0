package redis

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	rd "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/target"
)

func TestSameValue(t *testing.T) {
	for _, c := range []struct {
		req, got string
		same     bool
	}{
		{"1gb", "1073741824", true},
		{"1GB", "1073741824", true},
		{"1g", "1000000000", true},
		{"1g", "1073741824", false},
		{"512mb", "536870912", true},
		{"100k", "100000", true},
		{"100kb", "102400", true},
		{"yes", "yes", true},
		{"YES", "yes", true},
		{"no", "yes", false},
		{"everysec", "everysec", true},
		{"always", "everysec", false},
		{"60  1000", "60 1000", true},
		{`""`, "", true},
		{"", "", true},
		{"3600 1", "3600 1 300 100", false},
		{"allkeys-lru", "allkeys-lru", true},
	} {
		if got := sameValue(c.req, c.got); got != c.same {
			t.Errorf("SameValue(%q, %q) = %v, want %v", c.req, c.got, got, c.same)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"everysec": `"everysec"`, `""`: `""`, `a"b`: `"a\"b"`, "3600 1": `"3600 1"`, `'x y'`: `"x y"`} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func opener(dsn string, cfg target.Config) (target.Target, error) { return rd.Open(dsn, cfg) }

func conn(t *testing.T, dsn string) target.Conn {
	t.Helper()
	tg, err := rd.Open(dsn, target.Config{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSettingsExternal changes two harmless settings of an external server with
// CONFIG SET, reads them back, and puts back what they were; an immutable setting is
// refused as needing a restart, and the catalog says which are which. The server is a
// throwaway instance the plan did not start: settings are the whole server's, and the
// shared test server's are read and changed by other packages' tests (internal/cli's
// plan test sets lfu-log-factor too) and other checkouts' at the same time.
func TestSettingsExternal(t *testing.T) {
	dsn := throwawayRedis(t)
	ctx := context.Background()
	c := conn(t, dsn)
	s := Kind{}.Settings()
	cat, name, err := s.Catalog(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "Redis ") || len(name) < len("Redis 1") {
		t.Errorf("server name %q", name)
	}
	if _, ok := cat["appendfsync"]; !ok || cat["appendfsync"].Restart() {
		t.Errorf("appendfsync: %+v, %v", cat["appendfsync"], ok)
	}
	if !cat["daemonize"].Restart() || !cat["databases"].Restart() {
		t.Errorf("immutable settings not marked: %+v %+v", cat["daemonize"], cat["databases"])
	}
	if _, ok := cat["no-such-setting"]; ok {
		t.Error("catalog has a setting the server does not")
	}
	before := map[string]string{}
	for _, n := range []string{"slowlog-max-len", "lfu-log-factor"} {
		before[n], err = configGet(ctx, c, n)
		if err != nil || before[n] == "" {
			t.Fatalf("%s: %q %v", n, before[n], err)
		}
	}
	// Whatever happens below, the shared server gets its values back.
	t.Cleanup(func() {
		for n, v := range before {
			if err := c.Exec(ctx, "CONFIG SET "+n+" "+v); err != nil {
				t.Errorf("putting back %s: %v", n, err)
			}
		}
	})
	srv := plan.NewExternal("redis", s, opener, dsn, dsn, "", t.TempDir(), nil)
	// Values one above the server's, so that a run killed before its cleanup (which
	// left fixed values behind) cannot make the next run find them already set.
	next := func(n string) string {
		v, err := strconv.Atoi(before[n])
		if err != nil {
			t.Fatalf("%s = %q: %v", n, before[n], err)
		}
		return strconv.Itoa(v + 1)
	}
	want := []plan.KV{{Name: "slowlog-max-len", Value: next("slowlog-max-len")}, {Name: "lfu-log-factor", Value: next("lfu-log-factor")}}
	ch, err := srv.Apply(ctx, want, false)
	if err != nil || ch.Action != "set" {
		t.Fatalf("apply: %v %v", ch, err)
	}
	effs, err := srv.Verify(ctx, want, 0)
	if err != nil || len(effs) != 2 || effs[0].Value != want[0].Value || effs[1].Value != want[1].Value {
		t.Fatalf("verify: %+v %v", effs, err)
	}
	// A wrong expectation is reported, not passed.
	if _, err := srv.Verify(ctx, []plan.KV{{Name: "slowlog-max-len", Value: before["slowlog-max-len"]}}, 0); err == nil {
		t.Fatal("verify passed a value the server does not have")
	}
	if _, err := srv.Verify(ctx, []plan.KV{{Name: "no-such-setting", Value: "1"}}, 0); err == nil || !strings.Contains(err.Error(), "no such setting") {
		t.Fatalf("unknown setting: %v", err)
	}
	// An immutable one: no restart command, so it fails and says how to fix it.
	_, err = srv.Apply(ctx, append(want, plan.KV{Name: "databases", Value: "17"}), false)
	if err == nil || !strings.Contains(err.Error(), "restart_command") {
		t.Fatalf("immutable setting: %v", err)
	}
	if err := srv.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	for n, v := range before {
		if got, _ := configGet(ctx, c, n); got != v {
			t.Errorf("%s restored to %q, was %q", n, got, v)
		}
	}
}

// throwawayRedis starts a Redis instance for the test and returns its DSN.
func throwawayRedis(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if dbtest.Required() {
			t.Fatal("redis-server not installed but FATHOM_TEST_REQUIRE=1")
		}
		t.Skip("redis-server not installed")
	}
	base, err := os.MkdirTemp("", "frs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if os.Geteuid() == 0 {
		os.Chmod(base, 0o755)
	}
	ctx := context.Background()
	inst, err := instance.Create(ctx, instance.Options{Kind: instance.Redis, Name: "ext", Dir: base})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return inst.DSN()
}

// TestImmutableSettings checks the immutable list against the installed redis-server on
// a throwaway instance: CONFIG SET of each to its own value is refused, and of a
// mutable one accepted. It also drives a managed instance through plan.Server: settings
// at start, CONFIG SET, a restart for an immutable one, values in Redis's units.
func TestImmutableSettings(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if dbtest.Required() {
			t.Fatal("redis-server not installed but FATHOM_TEST_REQUIRE=1")
		}
		t.Skip("redis-server not installed")
	}
	base, err := os.MkdirTemp("", "frs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	if os.Geteuid() == 0 {
		os.Chmod(base, 0o755)
	}
	ctx := context.Background()
	inst, err := instance.Create(ctx, instance.Options{Kind: instance.Redis, Name: "rs", Dir: base})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(ctx)
	s := Kind{}.Settings()
	srv := plan.NewManaged(inst, "redis", s, opener)
	start := []plan.KV{{Name: "maxmemory", Value: "1gb"}, {Name: "appendonly", Value: "yes"}, {Name: "appendfsync", Value: "always"}, {Name: "save", Value: ""}}
	if ch, err := srv.Apply(ctx, start, false); err != nil || ch.Action != "started" {
		t.Fatalf("start: %v %v", ch, err)
	}
	effs, err := srv.Verify(ctx, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if effs[0].Value != "1073741824" || !effs[0].OK {
		t.Errorf("maxmemory 1gb read back as %+v", effs[0])
	}
	c := conn(t, inst.DSN())
	for n := range immutable {
		v, err := configGet(ctx, c, n)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Exec(ctx, "CONFIG SET "+n+" "+quote(v))
		if err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("CONFIG SET %s %q: %v, want refused as immutable", n, v, err)
		}
	}
	next := []plan.KV{{Name: "maxmemory", Value: "512mb"}, {Name: "appendonly", Value: "yes"}, {Name: "appendfsync", Value: "everysec"}, {Name: "save", Value: ""}}
	if ch, err := srv.Apply(ctx, next, false); err != nil || ch.Action != "set" {
		t.Fatalf("CONFIG SET: %v %v", ch, err)
	}
	if effs, err := srv.Verify(ctx, next, 0); err != nil || effs[0].Value != "536870912" || effs[2].Value != "everysec" {
		t.Fatalf("after CONFIG SET: %+v %v", effs, err)
	}
	last := append(next, plan.KV{Name: "databases", Value: "32"})
	ch, err := srv.Apply(ctx, last, false)
	if err != nil || ch.Action != "restarted" || !strings.Contains(ch.Why, "databases") {
		t.Fatalf("immutable setting on an instance: %v %v", ch, err)
	}
	if _, err := srv.Verify(ctx, last, 0); err != nil {
		t.Fatal(err)
	}
	var rn *plan.RestartNeeded
	err = s.SetLive(ctx, conn(t, inst.DSN()), "test", map[string]string{"databases": "16"}, []string{"databases"}, nil, nil)
	if !errors.As(err, &rn) || rn.Setting != "databases" {
		t.Fatalf("SetLive of an immutable setting: %v", err)
	}
}
