package mysql

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/instance/instancetest"
)

// The instance package finds this driver in the list internal/db gives it from the
// registry (the kind's bundle); these tests give it directly.
func init() { instance.UseDrivers(func() []instance.Driver { return []instance.Driver{Driver{}} }) }

// TestMariaDBLeavesOthersTemporaryTables: a MariaDB server deletes every "#sql…" file in
// its tmpdir when it starts. With the default tmpdir (/tmp) a throwaway instance deleted
// the temporary tables of the other MariaDB servers on the host mid-query, which crashed
// MariaDB 10.11; its own tmpdir keeps it to its own files.
func TestMariaDBLeavesOthersTemporaryTables(t *testing.T) {
	instancetest.NeedKind(t, instance.MariaDB)
	probe, err := os.CreateTemp(os.TempDir(), "#sql-temptable-fathom-probe-*.MAI")
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	t.Cleanup(func() { os.Remove(probe.Name()) })
	ctx := context.Background()
	inst, err := instance.Create(ctx, instancetest.Options(instance.Options{Kind: instance.MariaDB, Name: "tmpdir", Dir: instancetest.Dir(t), Owner: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	// Another server's file belongs to the account MariaDB runs as (in a sticky /tmp
	// a server could not remove root's); the server has not started yet.
	if err := inst.GiveToAccount(probe.Name()); err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c := instancetest.Connect(t, inst)
	defer c.Close()
	if got := instancetest.Value(t, c, instance.MariaDB, "tmpdir"); got != filepath.Join(inst.Path, myTmpDir) {
		t.Errorf("tmpdir = %q, want the instance's own %s", got, filepath.Join(inst.Path, myTmpDir))
	}
	if _, err := os.Stat(probe.Name()); err != nil {
		t.Errorf("another server's temporary table %s: %v (the instance's start removed it)", probe.Name(), err)
	}
}
