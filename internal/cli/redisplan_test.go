package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	rd "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

func redisConfig(t *testing.T, dsn, name string) string {
	t.Helper()
	tg, err := rd.Open(dsn, target.Config{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := c.(*rd.Conn).ConfigGet(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return m[name]
}

// A plan on a Redis server: unknown and immutable settings are refused in one line each
// before anything runs (--check touches no server: an external server's settings are
// checked when the experiment starts; an instance plan's by --check, from the installed
// redis-server); a run sets a setting with CONFIG SET, reads it back, and puts back the
// server's value at the end. The server is a throwaway instance the plan did not start:
// settings are the whole server's, and the shared test server's are read and changed by
// other packages' tests (internal/db/redis's) and other checkouts' at the same time.
func TestRedisPlanSettings(t *testing.T) {
	needServer(t, instance.Redis)
	env, dir := expEnv(t)
	ctx := context.Background()
	srv, err := instance.Create(ctx, instance.Options{Kind: instance.Redis, Name: "ext", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Remove(ctx)
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	dsn := srv.DSN()
	bad := writePlan(t, `experiment: rbad
target: `+dsn+`
workload: redis-kv
settings: {maxmemori: 1gb, daemonize: "no"}
`)
	r := fathom(t, env, nil, "experiment", bad)
	if r.code != exitUsage || strings.Contains(r.stdout, "run 1") {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"plan.yaml:4: setting maxmemori: Redis 7", "has no such setting (did you mean maxmemory?)",
		"setting daemonize: Redis", "cannot change it while running"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	inst := writePlan(t, `experiment: rinst
instance: {kind: redis}
workload: redis-kv
settings: {appendfsinc: always, port: 7000}
`)
	r = fathom(t, env, nil, "experiment", "--check", inst)
	if r.code != exitUsage {
		t.Fatalf("instance plan: exit %d, want 2\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"plan.yaml:4: setting appendfsinc: Redis 7", "(did you mean appendfsync?)", "setting port: fathom sets an instance's port itself"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	before := redisConfig(t, dsn, "lfu-log-factor")
	if before == "" || before == "11" || before == "12" {
		t.Fatalf("lfu-log-factor is %q before the test", before)
	}
	good := writePlan(t, `experiment: rgood
target: `+dsn+`
workload: redis-kv
options: {keys: 200, value_size: 16}
clients: 1
transactions: 50
order: sequential
matrix:
  settings.lfu-log-factor: [11, 12]
`)
	r = fathom(t, env, nil, "experiment", "--check", good)
	if r.code != 0 || !strings.Contains(r.stdout, ": ok: experiment") {
		t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fathom(t, env, nil, "experiment", good)
	if got := redisConfig(t, dsn, "lfu-log-factor"); got != before {
		t.Errorf("lfu-log-factor after the experiment: %q, was %q", got, before)
	}
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"set; in effect: lfu-log-factor=11", "set; in effect: lfu-log-factor=12", "2 of 2 runs complete"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("output lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
}
