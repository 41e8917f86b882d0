package collect_test

import (
	"context"
	"flag"
	"fmt"
	"github.com/fathom-lab/fathom/internal/collect"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db/mysql/target"
	"github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/snapshot")

// Golden tests for the snapshot's review sections, on throwaway servers whose
// configuration fathom wrote (so that files, accounts and replication are known).
// Volatile values are normalised: the instances' directory becomes BASE, every run of
// digits N, and runs of spaces one space (alignment follows value widths).

var (
	reDigits = regexp.MustCompile(`[0-9]+`)
	reSpaces = regexp.MustCompile(` +`)
)

func normalise(s, base string) string {
	s = strings.ReplaceAll(s, base, "BASE")
	s = reDigits.ReplaceAllString(s, "N")
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(reSpaces.ReplaceAllString(l, " "), " ")
		// The replication threads' states change from moment to moment.
		if name, _, ok := strings.Cut(l, " "); ok && strings.HasSuffix(name, "_State") {
			l = name + " STATE"
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}

// golden compares text with testdata/snapshot/name (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "snapshot", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// reviewInstance starts a throwaway server under base; it is removed after the test.
func reviewInstance(t *testing.T, base string, kind instance.Kind, name string, settings ...instance.Setting) (*instance.Instance, target.Target) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inst, err := instance.Create(ctx, instance.Options{Kind: kind, Name: name, Dir: base, Settings: settings, StartTimeout: time.Minute,
		Bin: dbtest.PGBin(kind == instance.Postgres)})
	if err != nil {
		if dbtest.Required() {
			t.Fatalf("creating a %s instance: %v", kind, err)
		}
		t.Skipf("cannot create a %s instance here: %v", kind, err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if err := inst.Start(ctx); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	var tg target.Target
	if kind == instance.Postgres {
		tg, err = postgres.Open(inst.DSN(), target.Config{ConnectTimeout: 5 * time.Second})
	} else {
		tg, err = mysql.Open(inst.DSN(), target.Config{ConnectTimeout: 5 * time.Second})
	}
	if err != nil {
		t.Fatal(err)
	}
	return inst, tg
}

func reviewBase(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts database servers: not in -short mode")
	}
	base, err := os.MkdirTemp("", "fsn")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755) // the servers run as postgres/mysql under root
	t.Cleanup(func() { os.RemoveAll(base) })
	return base
}

func execAll(t *testing.T, tg target.Target, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range stmts {
		if _, err := c.Query(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func fileText(t *testing.T, b *collect.Bundle, name string) string {
	t.Helper()
	f := b.File(name)
	if f == nil {
		t.Fatalf("no %s in %v (errors %v)", name, names(b), b.Errors)
	}
	return string(f.Data)
}

// A MariaDB primary with a connected replica: the replica's status names every
// column (MariaDB adds 21 past the 33 every version shares), the primary lists its
// replica, both bundles hold the option file the server was started with, the
// error-log tail, the binary log and slow digests and the accounts without secrets.
func TestSnapshotReviewMariaDB(t *testing.T) {
	dbtest.SkipMariaDBInPGMatrix(t)
	base := reviewBase(t)
	primary, ptg := reviewInstance(t, base, instance.MariaDB, "primary",
		instance.Setting{Name: "server_id", Value: "1"},
		instance.Setting{Name: "log_bin", Value: "primary-bin"},
		instance.Setting{Name: "max_binlog_size", Value: "4096"},
		instance.Setting{Name: "performance_schema", Value: "ON"})
	_, rtg := reviewInstance(t, base, instance.MariaDB, "replica",
		instance.Setting{Name: "server_id", Value: "2"},
		instance.Setting{Name: "relay_log", Value: "replica-relay"})
	const secret = "r3pl-Secret-pw"
	// mariadb-install-db makes root@HOSTNAME, which differs between machines.
	execAll(t, ptg, "EXECUTE IMMEDIATE CONCAT('DROP USER IF EXISTS root@', QUOTE(@@hostname))")
	execAll(t, ptg, "CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY '"+secret+"'", "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'",
		"CREATE DATABASE review", "CREATE TABLE review.t (id int primary key, v varchar(200))")
	for i := 0; i < 40; i++ { // several binary logs of 4 kB
		execAll(t, ptg, fmt.Sprintf("INSERT INTO review.t VALUES (%d, repeat('x', 200))", i), "FLUSH BINARY LOGS")
	}
	execAll(t, rtg, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='repl', MASTER_PASSWORD='%s', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
		primary.Port, secret), "START SLAVE")
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := rtg.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := c.Query(ctx, "SELECT count(*) FROM review.t")
		c.Close()
		if err == nil && len(rows) == 1 && rows[0][0] == "40" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not catch up: %v %v", rows, err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	opts := collect.SnapshotOptions{Interval: time.Second, Samples: 3, TopTables: 5, Secrets: []string{secret}}
	rb, err := collect.Snapshot(ctx, rtg, withKind(opts, rtg))
	if err != nil {
		t.Fatal(err)
	}
	checkBundle(t, rb, []string{"replica_status.txt", "config_files.txt", "config_contents.txt", "error_log_tail.txt", "users.txt",
		"network.txt", "status_3.tsv", "innodb_status_3.txt"}, []string{"Role | replica", "Option files", "Accounts", "Network"})
	rs := fileText(t, rb, "replica_status.txt")
	for _, col := range []string{"Last_IO_Error", "Last_SQL_Error", "Master_Server_Id", "Gtid_IO_Pos", "Seconds_Behind_Master", "Slave_SQL_Running_State"} {
		if !strings.Contains(rs, col) {
			t.Errorf("replica_status.txt lacks column %s", col)
		}
	}
	if regexp.MustCompile(`(?m)^(3[3-9]|4[0-9]|5[0-9]) `).MatchString(rs) {
		t.Errorf("replica_status.txt has numbered columns:\n%s", rs)
	}
	// Column names with their values normalised: the section's golden.
	golden(t, "mariadb_replica_status.txt", normalise(rs, base))
	golden(t, "mariadb_replica_config_files.txt", normalise(fileText(t, rb, "config_files.txt"), base))
	golden(t, "mariadb_replica_config_contents.txt", normalise(fileText(t, rb, "config_contents.txt"), base))
	if tail := fileText(t, rb, "error_log_tail.txt"); !strings.Contains(tail, "server.log") || !strings.Contains(tail, "Slave") {
		t.Errorf("error_log_tail.txt is not the replica's log:\n%s", tail)
	}

	pb, err := collect.Snapshot(ctx, ptg, withKind(opts, ptg))
	if err != nil {
		t.Fatal(err)
	}
	checkBundle(t, pb, []string{"replication.txt", "binlog_digest.txt", "slow_digest.txt", "users.txt"},
		[]string{"primary with 1 connected replicas", "Binlog rotation"})
	if r := fileText(t, pb, "replication.txt"); !strings.Contains(r, "Binlog Dump") || !strings.Contains(r, "repl") {
		t.Errorf("replication.txt does not list the connected replica:\n%s", r)
	}
	golden(t, "mariadb_primary_binlog_digest.txt", normalise(regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).ReplaceAllString(
		firstLines(fileText(t, pb, "binlog_digest.txt"), 6), "TIME"), base))
	users := fileText(t, pb, "users.txt")
	golden(t, "mariadb_primary_users.txt", normalise(users, base))
	if strings.Contains(users, "*") && regexp.MustCompile(`\*[0-9A-F]{40}`).MatchString(users) {
		t.Errorf("users.txt holds a password hash:\n%s", users)
	}
	if sd := fileText(t, pb, "slow_digest.txt"); !strings.Contains(sd, "INSERT INTO `review` . `t`") && !strings.Contains(sd, "INSERT INTO `review`.`t`") {
		t.Errorf("slow_digest.txt lacks the inserts:\n%s", sd)
	}
}

// A PostgreSQL instance with pg_stat_statements: the files as read, the parsed
// pg_hba rules, roles without passwords, the statement digest and the log tail.
func TestSnapshotReviewPostgres(t *testing.T) {
	base := reviewBase(t)
	inst, tg := reviewInstance(t, base, instance.Postgres, "pg",
		instance.Setting{Name: "shared_preload_libraries", Value: "pg_stat_statements"})
	const secret = "r0le-Secret-pw"
	execAll(t, tg, "CREATE EXTENSION pg_stat_statements", "CREATE ROLE app LOGIN PASSWORD '"+secret+"'",
		"CREATE TABLE review (id int primary key)", "INSERT INTO review SELECT generate_series(1, 1000)",
		"SELECT count(*) FROM review a, review b WHERE a.id < b.id")
	b, err := collect.Snapshot(context.Background(), tg, collect.SnapshotOptions{Kind: dbOf(tg), Interval: time.Second, Samples: 2, TopTables: 5, Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	checkBundle(t, b, []string{"config_files.txt", "config_contents.txt", "hba_rules.txt", "users.txt", "slow_digest.txt", "error_log_tail.txt", "network.txt"},
		[]string{"Config files", "Roles", "Slowest in all"})
	contents := fileText(t, b, "config_contents.txt")
	for _, f := range []string{"postgresql.conf", "fathom.conf", "pg_hba.conf", "postgresql.auto.conf"} {
		if !strings.Contains(contents, "##### "+inst.DataDir()+"/"+f) {
			t.Errorf("config_contents.txt lacks %s", f)
		}
	}
	if !strings.Contains(contents, "shared_preload_libraries = 'pg_stat_statements'") {
		t.Error("config_contents.txt lacks the setting fathom wrote")
	}
	if sd := fileText(t, b, "slow_digest.txt"); !strings.Contains(sd, "FROM review a, review b") {
		t.Errorf("slow_digest.txt lacks the slow join:\n%s", sd)
	}
	if tail := fileText(t, b, "error_log_tail.txt"); !strings.Contains(tail, inst.LogFile()) {
		t.Errorf("error_log_tail.txt is not the instance's log:\n%s", tail)
	}
	golden(t, "postgres_hba_rules.txt", normalise(fileText(t, b, "hba_rules.txt"), base))
	golden(t, "postgres_users.txt", normalise(firstLines(fileText(t, b, "users.txt"), 4), base))
	golden(t, "postgres_slow_digest_head.txt", normalise(firstLines(fileText(t, b, "slow_digest.txt"), 3), base))
}

func firstLines(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// A PostgreSQL primary with a streaming standby (made from a copy of the stopped
// primary's data directory, as the matrix's server-only builds have no
// pg_basebackup): the primary's bundle lists the connected standby, the standby's
// says it is one and shows its WAL receiver.
func TestSnapshotReviewPostgresStandby(t *testing.T) {
	base := reviewBase(t)
	primary, ptg := reviewInstance(t, base, instance.Postgres, "primary")
	// (its target is opened again below, after the copy: the first one is not used)
	standby, _ := reviewInstance(t, base, instance.Postgres, "standby")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := standby.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := primary.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(standby.DataDir()); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, "cp", "-a", primary.DataDir(), standby.DataDir()).CombinedOutput(); err != nil {
		t.Fatalf("copying the primary's data directory: %v: %s", err, out)
	}
	if err := primary.Start(ctx); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(standby.DataDir(), "postmaster.pid"))
	// The copy has the primary's password (instances require one): the standby's own
	// password file says so, and its server reads the primary's from a password file
	// its account owns.
	pass := filepath.Join(standby.Path, "primary.pgpass")
	if err := os.WriteFile(pass, []byte("*:*:*:"+primary.User+":"+primary.Password()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(standby.SecretFile(), []byte("*:*:*:"+standby.User+":"+primary.Password()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(standby.DataDir()); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			os.Chown(pass, int(sys.Uid), int(sys.Gid))
		}
	}
	conf := fmt.Sprintf("\nprimary_conninfo = 'host=127.0.0.1 port=%d user=%s application_name=standby1 passfile=%s'\n", primary.Port, standby.User, pass)
	f, err := os.OpenFile(filepath.Join(standby.DataDir(), "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(conf)
	f.Close()
	signal := filepath.Join(standby.DataDir(), "standby.signal")
	if err := os.WriteFile(signal, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(standby.DataDir()); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			os.Chown(signal, int(sys.Uid), int(sys.Gid))
		}
	}
	if err := standby.Configure(standby.Settings); err != nil { // its own port again
		t.Fatal(err)
	}
	if err := standby.Start(ctx); err != nil {
		t.Fatalf("starting the standby: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := ptg.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := c.Query(ctx, "SELECT state FROM pg_stat_replication WHERE application_name = 'standby1'")
		c.Close()
		if err == nil && len(rows) == 1 && rows[0][0] == "streaming" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby is not streaming: %v %v", rows, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	opts := collect.SnapshotOptions{Interval: time.Second, TopTables: 5}
	pb, err := collect.Snapshot(context.Background(), ptg, withKind(opts, ptg))
	if err != nil {
		t.Fatal(err)
	}
	checkBundle(t, pb, []string{"replication.txt"}, []string{"primary with 1 connected replicas"})
	if r := fileText(t, pb, "replication.txt"); !strings.Contains(r, "standby1") || !strings.Contains(r, "streaming") {
		t.Errorf("the primary's replication.txt does not list the standby:\n%s", r)
	}
	// The standby's target read its password file when it was opened, before the copy.
	stg, err := postgres.Open(standby.DSN(), target.Config{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := collect.Snapshot(context.Background(), stg, withKind(opts, stg))
	if err != nil {
		t.Fatal(err)
	}
	checkBundle(t, sb, []string{"replication.txt"}, []string{"Role | replica"})
	if r := fileText(t, sb, "replication.txt"); !strings.Contains(r, "WAL receiver") || !strings.Contains(r, "streaming") {
		t.Errorf("the standby's replication.txt does not show its receiver:\n%s", r)
	}
}
