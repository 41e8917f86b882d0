package instance_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"path/filepath"

	_ "github.com/fathom-lab/fathom/internal/db" // the kinds' drivers
	. "github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/instance/instancetest"
)

var (
	needKind    = instancetest.NeedKind
	testOptions = instancetest.Options
	testDir     = instancetest.Dir
	connect     = instancetest.Connect
	value       = instancetest.Value
)

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
			inst, err := Create(ctx, testOptions(Options{Kind: tc.kind, Name: "life", Dir: base, Settings: []Setting{{Name: tc.setting, Value: tc.first}}, Owner: "test"}))
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

			if err := inst.Configure([]Setting{{Name: tc.setting, Value: tc.second}}); err != nil {
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
		{Postgres, Setting{Name: "shared_buffers", Value: "lots"}, "shared_buffers"},
		{MariaDB, Setting{Name: "innodb_no_such_variable", Value: "1"}, "innodb_no_such_variable"},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			needKind(t, tc.kind)
			ctx := context.Background()
			inst, err := Create(ctx, testOptions(Options{Kind: tc.kind, Name: "bad", Dir: testDir(t), Settings: []Setting{tc.bad}, StartTimeout: 30 * time.Second}))
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

func TestCreateRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := Create(ctx, testOptions(Options{Kind: Postgres, Name: "../x"})); err == nil || !strings.Contains(err.Error(), "instance name") {
		t.Errorf("bad name: %v", err)
	}
	if _, err := Create(ctx, testOptions(Options{Kind: "oracle", Name: "x"})); err == nil || !strings.Contains(err.Error(), "mariadb, postgres or redis") {
		t.Errorf("bad kind: %v", err)
	}
	needKind(t, Postgres)
	long := filepath.Join(testDir(t), strings.Repeat("d", 90))
	if _, err := Create(ctx, testOptions(Options{Kind: Postgres, Name: "x", Dir: long})); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("long dir: %v", err)
	}
	base := testDir(t)
	inst, err := Create(ctx, testOptions(Options{Kind: Postgres, Name: "twice", Dir: base}))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(ctx)
	if _, err := Create(ctx, testOptions(Options{Kind: Postgres, Name: "twice", Dir: base})); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate: %v", err)
	}
	if err := inst.Configure([]Setting{{Name: "work_mem", Value: "1MB\nport = 5432"}}); err == nil {
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
