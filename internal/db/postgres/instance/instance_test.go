package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/instance/instancetest"
)

// The instance package finds this driver in the list internal/db gives it from the
// registry (the kind's bundle); these tests give it directly.
func init() { instance.UseDrivers(func() []instance.Driver { return []instance.Driver{Driver{}} }) }

// Reload applies a setting PostgreSQL can change without a restart.
func TestPostgresReload(t *testing.T) {
	t.Parallel()
	instancetest.NeedKind(t, instance.Postgres)
	ctx := context.Background()
	inst, err := instance.Create(ctx, instancetest.Options(instance.Options{Kind: instance.Postgres, Name: "reload", Dir: instancetest.Dir(t)}))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(ctx)
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inst.Configure([]instance.Setting{{Name: "synchronous_commit", Value: "off"}}); err != nil {
		t.Fatal(err)
	}
	if err := inst.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // a loaded machine's postmaster may be slow to reload
	for {
		c := instancetest.Connect(t, inst)
		got := instancetest.Value(t, c, instance.Postgres, "synchronous_commit")
		c.Close()
		if got == "off" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("synchronous_commit = %s after reload", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Options.Bin: a directory without the programs, or with another version than the
// one asked for, is refused with a line that says so; the right one is used as given.
func TestCreateFromBin(t *testing.T) {
	instancetest.NeedKind(t, instance.Postgres)
	ctx := context.Background()
	if _, err := instance.Create(ctx, instance.Options{Kind: instance.Postgres, Name: "x", Dir: instancetest.Dir(t), Bin: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "has no initdb program") {
		t.Errorf("empty bin directory: %v", err)
	}
	bin := os.Getenv("FATHOM_TEST_PG_BIN")
	if bin == "" {
		b, _, err := Driver{}.Find("")
		if err != nil {
			t.Fatal(err)
		}
		bin = b
	}
	if _, err := instance.Create(ctx, instance.Options{Kind: instance.Postgres, Name: "x", Dir: instancetest.Dir(t), Bin: bin, Version: "9"}); err == nil || !strings.Contains(err.Error(), "not 9") {
		t.Errorf("wrong version: %v", err)
	}
	inst, err := instance.Create(ctx, instance.Options{Kind: instance.Postgres, Name: "frombin", Dir: instancetest.Dir(t), Bin: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(ctx)
	if want, _ := filepath.Abs(bin); inst.Bin != want {
		t.Errorf("instance programs from %s, want %s", inst.Bin, want)
	}
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c := instancetest.Connect(t, inst)
	defer c.Close()
	rows, err := c.Query(ctx, "SELECT current_setting('server_version')")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rows[0][0], inst.Version) && !strings.HasPrefix(inst.Version, rows[0][0]) {
		t.Errorf("server reports %s, instance says %s", rows[0][0], inst.Version)
	}
}
