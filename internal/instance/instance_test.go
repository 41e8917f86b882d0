package instance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/mysql"
	"github.com/fathom-lab/fathom/internal/target/postgres"
)

// needKind skips (or, under FATHOM_TEST_REQUIRE=1, fails) when kind's programs are
// not installed.
func needKind(t *testing.T, k Kind) {
	t.Helper()
	if _, err := Version(k, ""); err != nil {
		if dbtest.Required() {
			t.Fatalf("%v (FATHOM_TEST_REQUIRE=1)", err)
		}
		t.Skip(err)
	}
}

// testDir is a short base directory every server account can reach (socket paths
// must stay short; t.TempDir is under /tmp but long).
func testDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "fi-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func connect(t *testing.T, inst *Instance) target.Conn {
	t.Helper()
	var tg target.Target
	var err error
	cfg := target.Config{ConnectTimeout: 5 * time.Second}
	if inst.Kind == Postgres {
		tg, err = postgres.Open(inst.DSN(), cfg)
	} else {
		tg, err = mysql.Open(inst.DSN(), cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatalf("connecting to %s: %v", inst.DSN(), err)
	}
	return c
}

func value(t *testing.T, c target.Conn, k Kind, name string) string {
	t.Helper()
	q := "SELECT current_setting('" + name + "')"
	if k == MariaDB {
		q = "SELECT @@GLOBAL." + name
	}
	rows, err := c.Query(context.Background(), q)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%s: %v %v", q, rows, err)
	}
	return rows[0][0]
}

// The life of an instance: create, start with settings, connect, change a setting
// that needs a restart, restart, stop, start again with its data, remove.
func TestLifecycle(t *testing.T) {
	cases := []struct {
		kind             Kind
		setting          string
		first, second    string
		wantFirst, wantS string
	}{
		{Postgres, "shared_buffers", "16MB", "24MB", "16MB", "24MB"},
		{MariaDB, "innodb_log_buffer_size", "8M", "16M", "8388608", "16777216"},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			needKind(t, tc.kind)
			ctx := context.Background()
			base := testDir(t)
			inst, err := Create(ctx, Options{Kind: tc.kind, Name: "life", Dir: base, Settings: []Setting{{tc.setting, tc.first}}, Owner: "test"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { inst.Remove(context.Background()) })
			if inst.Port == 5432 || inst.Port == 3306 || inst.Port == 0 {
				t.Fatalf("port %d", inst.Port)
			}
			if err := inst.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if !inst.Running() {
				t.Fatal("not running after Start")
			}
			if _, err := os.Stat(inst.Socket); err != nil {
				t.Errorf("socket: %v", err)
			}
			c := connect(t, inst)
			if got := value(t, c, tc.kind, tc.setting); got != tc.wantFirst {
				t.Errorf("%s = %q, want %q", tc.setting, got, tc.wantFirst)
			}
			if err := c.Exec(ctx, "CREATE TABLE keep_me (id int)"); err != nil {
				t.Fatal(err)
			}
			c.Close()

			// Listed, and found by name.
			list, err := List(base)
			if err != nil || len(list) != 1 || list[0].Name != "life" || list[0].Owner != "test" {
				t.Fatalf("List: %v %v", list, err)
			}
			if _, err := Find(base, "life"); err != nil {
				t.Fatal(err)
			}

			if err := inst.Configure([]Setting{{tc.setting, tc.second}}); err != nil {
				t.Fatal(err)
			}
			if err := inst.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			c = connect(t, inst)
			if got := value(t, c, tc.kind, tc.setting); got != tc.wantS {
				t.Errorf("after restart %s = %q, want %q", tc.setting, got, tc.wantS)
			}
			c.Close()

			if err := inst.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if inst.Running() {
				t.Fatal("running after Stop")
			}
			// A second fathom (Open from the directory) starts it again; the data is kept.
			again, err := Open(inst.Path)
			if err != nil {
				t.Fatal(err)
			}
			if err := again.Start(ctx); err != nil {
				t.Fatal(err)
			}
			c = connect(t, again)
			if _, err := c.Query(ctx, "SELECT count(*) FROM keep_me"); err != nil {
				t.Errorf("table lost across restart: %v", err)
			}
			c.Close()
			if err := again.Remove(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(inst.Path); !os.IsNotExist(err) {
				t.Errorf("instance directory left behind: %v", err)
			}
			if again.Running() {
				t.Error("server still running after Remove")
			}
		})
	}
}

// A setting the server rejects: a clear error with the end of the server's log, and
// nothing left running.
func TestStartFailureShowsLog(t *testing.T) {
	cases := []struct {
		kind Kind
		bad  Setting
		want string
	}{
		{Postgres, Setting{"shared_buffers", "lots"}, "shared_buffers"},
		{MariaDB, Setting{"innodb_no_such_variable", "1"}, "innodb_no_such_variable"},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			needKind(t, tc.kind)
			ctx := context.Background()
			inst, err := Create(ctx, Options{Kind: tc.kind, Name: "bad", Dir: testDir(t), Settings: []Setting{tc.bad}, StartTimeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Remove(ctx)
			err = inst.Start(ctx)
			se, ok := err.(*StartError)
			if !ok {
				t.Fatalf("Start: %v (%T), want *StartError", err, err)
			}
			if !strings.Contains(se.Log, tc.want) || !strings.Contains(err.Error(), "last lines of") {
				t.Errorf("error does not show the log naming %s:\n%v", tc.want, err)
			}
			if inst.Running() {
				t.Error("server left running")
			}
		})
	}
}

// Reload applies a setting PostgreSQL can change without a restart.
func TestPostgresReload(t *testing.T) {
	t.Parallel()
	needKind(t, Postgres)
	ctx := context.Background()
	inst, err := Create(ctx, Options{Kind: Postgres, Name: "reload", Dir: testDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(ctx)
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inst.Configure([]Setting{{"synchronous_commit", "off"}}); err != nil {
		t.Fatal(err)
	}
	if err := inst.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := connect(t, inst)
		got := value(t, c, Postgres, "synchronous_commit")
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

func TestCreateRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := Create(ctx, Options{Kind: Postgres, Name: "../x"}); err == nil || !strings.Contains(err.Error(), "instance name") {
		t.Errorf("bad name: %v", err)
	}
	if _, err := Create(ctx, Options{Kind: "oracle", Name: "x"}); err == nil || !strings.Contains(err.Error(), "postgres or mariadb") {
		t.Errorf("bad kind: %v", err)
	}
	needKind(t, Postgres)
	long := filepath.Join(testDir(t), strings.Repeat("d", 90))
	if _, err := Create(ctx, Options{Kind: Postgres, Name: "x", Dir: long}); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("long dir: %v", err)
	}
	base := testDir(t)
	inst, err := Create(ctx, Options{Kind: Postgres, Name: "twice", Dir: base})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(ctx)
	if _, err := Create(ctx, Options{Kind: Postgres, Name: "twice", Dir: base}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate: %v", err)
	}
	if err := inst.Configure([]Setting{{"work_mem", "1MB\nport = 5432"}}); err == nil {
		t.Error("a multi-line value was accepted")
	}
}

func TestCatalog(t *testing.T) {
	for _, k := range []Kind{Postgres, MariaDB} {
		t.Run(string(k), func(t *testing.T) {
			needKind(t, k)
			c, err := Catalog(k, "")
			if err != nil {
				t.Fatal(err)
			}
			want := map[Kind][]string{Postgres: {"shared_buffers", "synchronous_commit"}, MariaDB: {"innodb_buffer_pool_size", "sync_binlog", "innodb_flush_log_at_trx_commit"}}
			for _, n := range want[k] {
				if _, ok := c[n]; !ok {
					t.Errorf("%s missing from the catalog (%d entries)", n, len(c))
				}
			}
			if k == Postgres && !c["shared_buffers"].Restart() {
				t.Error("shared_buffers should need a restart")
			}
		})
	}
}
