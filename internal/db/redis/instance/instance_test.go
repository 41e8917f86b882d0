package redis

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	redis "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// The instance package finds this driver in the list internal/db gives it from the
// registry (the kind's bundle); these tests give it directly.
func init() { instance.UseDrivers(func() []instance.Driver { return []instance.Driver{Driver{}} }) }

// TestRedisInstance starts a throwaway Redis: password required, settings applied,
// measured restart loads what was written, stop leaves no process.
func TestRedisInstance(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if dbtest.Required() {
			t.Fatal("redis-server not installed but FATHOM_TEST_REQUIRE=1")
		}
		t.Skip("redis-server not installed")
	}
	base, err := os.MkdirTemp("", "fr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	if os.Geteuid() == 0 {
		os.Chmod(base, 0o755)
	}
	ctx := context.Background()
	inst, err := instance.Create(ctx, instance.Options{Kind: instance.Redis, Name: "r1", Dir: base, Settings: []instance.Setting{{Name: "appendonly", Value: "yes"}, {Name: "appendfsync", Value: "always"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(ctx)
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	dsn := inst.DSN()
	if strings.Contains(dsn, inst.Password()) || inst.Password() == "" {
		t.Fatalf("DSN %s holds the password, or there is none", dsn)
	}
	if _, err := instance.Create(ctx, instance.Options{Kind: instance.Redis, Name: "r2", Dir: base, Settings: []instance.Setting{{Name: "requirepass", Value: "x"}}}); err == nil {
		t.Error("requirepass accepted as a setting")
	}
	// Without the password: refused.
	bare, _ := redis.Open(strings.Split(dsn, "?")[0], target.Config{})
	defer bare.Close()
	if c, err := bare.Connect(ctx); err == nil {
		err = c.Exec(ctx, "SET k v")
		c.Close()
		if target.ClassOf(err) != target.ClassAuth {
			t.Fatalf("write without the password: %v", err)
		}
	} else if target.ClassOf(err) != target.ClassAuth {
		t.Fatalf("connect without the password: %v", err)
	}
	tg, err := redis.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, "CONFIG GET appendfsync")
	if err != nil || len(rows) != 1 || rows[0][1] != "always" {
		t.Fatalf("appendfsync: %v %v", rows, err)
	}
	if err := c.Exec(ctx, "SET kept 1"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	tg.Close()
	d, err := inst.MeasureRestart(ctx)
	if err != nil || d <= 0 || d > 5*time.Minute {
		t.Fatalf("measured restart: %v %v", d, err)
	}
	tg, _ = redis.Open(dsn, target.Config{})
	defer tg.Close()
	c, err = tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err = c.Query(ctx, "GET kept")
	c.Close()
	if err != nil || len(rows) != 1 || rows[0][0] != "1" {
		t.Fatalf("after the restart: %v %v (the AOF was not loaded)", rows, err)
	}
	pid := inst.PID()
	if err := inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if instance.ProcessAlive(pid) {
		t.Fatal("redis-server still running after Stop")
	}
}
