package collect_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"github.com/fathom-lab/fathom/internal/collect"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
)

const fakePassword = "Sn4pSecret!"

// checkBundle checks what every snapshot holds, and that the secret is nowhere.
func checkBundle(t *testing.T, b *collect.Bundle, want []string, summary []string) {
	t.Helper()
	if b.Files[0].Name != "summary.txt" {
		t.Errorf("first file %s, want summary.txt", b.Files[0].Name)
	}
	for _, n := range want {
		f := b.File(n)
		if f == nil {
			t.Errorf("no %s in %v (errors %v)", n, names(b), b.Errors)
			continue
		}
		if len(f.Data) == 0 {
			t.Errorf("%s is empty", n)
		}
	}
	sum := string(b.File("summary.txt").Data)
	for _, s := range summary {
		if !strings.Contains(sum, s) {
			t.Errorf("summary lacks %q:\n%s", s, sum)
		}
	}
	for _, f := range b.Files {
		if strings.Contains(string(f.Data), fakePassword) || strings.Contains(string(f.Data), url.QueryEscape(fakePassword)) {
			t.Errorf("%s holds the password", f.Name)
		}
	}
	for _, e := range b.Errors {
		t.Logf("source not taken (allowed): %s: %s", e.Source, e.Err)
	}
}

func names(b *collect.Bundle) []string {
	var out []string
	for _, f := range b.Files {
		out = append(out, f.Name)
	}
	return out
}

func TestSnapshotPostgres(t *testing.T) {
	dsn := dbtest.PostgresDatabase(t, "collect")
	// The test server trusts local connections: a password in the DSN is accepted and
	// must appear in no file.
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword(u.User.Username(), fakePassword)
	dsn = u.String()
	tg, err := postgres.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A session that is blocked by another, to be listed.
	a, _ := tg.Connect(ctx)
	b, _ := tg.Connect(ctx)
	defer a.Close()
	defer b.Close()
	if _, err := a.Query(ctx, "CREATE TABLE IF NOT EXISTS snap_t (id int primary key, secret text); INSERT INTO snap_t VALUES (1, '') ON CONFLICT DO NOTHING"); err != nil {
		t.Fatal(err)
	}
	if err := a.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Query(ctx, "UPDATE snap_t SET secret = 'x' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.Query(ctx, "UPDATE snap_t SET secret = 'y' WHERE id = 1")
		done <- err
	}()
	// Until the update waits for a's lock (a fixed sleep was too short on a busy machine),
	// seen from a third session: a's transaction would keep its first view of the activity.
	watch, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rows, err := watch.Query(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query = 'UPDATE snap_t SET secret = ''y'' WHERE id = 1' AND datname = current_database()")
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 && rows[0][0] != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second update did not wait for the first's lock within 30s")
		}
	}
	var progress []string
	bundle, err := collect.Snapshot(ctx, tg, collect.SnapshotOptions{Kind: dbOf(tg), Interval: time.Second, TopTables: 5, Secrets: []string{fakePassword}, DSN: dsn,
		Progress: func(s string) { progress = append(progress, s) }})
	_ = a.Rollback(ctx)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	checkBundle(t, bundle, []string{"server.txt", "settings.tsv", "config_files.txt", "activity.tsv", "blocked.txt", "long_running.txt",
		"replication.txt", "databases.txt", "tables.txt", "schema.sql", "logs.txt", "status_1.tsv", "status_2.tsv", "status_diff.tsv",
		"vmstat.txt", "os.txt", "meminfo.txt"},
		[]string{"PostgreSQL", "Checkpoints", "max_wal_size", "Blocked", "Databases", "Writeback", "Files", "status_diff.tsv"})
	if !strings.Contains(string(bundle.File("blocked.txt").Data), "UPDATE snap_t") {
		t.Errorf("blocked.txt does not list the blocked update:\n%s", bundle.File("blocked.txt").Data)
	}
	if !strings.Contains(string(bundle.File("schema.sql").Data), "CREATE TABLE public.snap_t") {
		t.Errorf("schema.sql lacks snap_t")
	}
	if lines := strings.Count(string(bundle.File("vmstat.txt").Data), "\n"); lines < 2 {
		t.Errorf("vmstat.txt has %d lines", lines)
	}
	// Counters that did not move are left out, and on an idle machine a second may pass
	// without a single tick of user CPU; the CPU time as a whole always advances.
	if d := string(bundle.File("status_diff.tsv").Data); !regexp.MustCompile(`(?m)^os\.cpu\.[a-z_]+_pct\tcounter\t`).MatchString(d) || !strings.Contains(d, "pg.sessions.active\tgauge") {
		t.Errorf("status_diff.tsv lacks a CPU counter or a session gauge:\n%s\ncollectors:\n%s", d, bundle.File("collectors.txt").Data)
	}
	if len(progress) < 5 {
		t.Errorf("progress %v", progress)
	}
	// As an archive: one directory, every file.
	path := filepath.Join(t.TempDir(), "snap.tar.gz")
	if err := bundle.WriteTarGz(path); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h.Name, "snap/") {
			t.Errorf("archive entry %s outside snap/", h.Name)
		}
		n++
	}
	if n != len(bundle.Files)+1 {
		t.Errorf("archive has %d entries, want %d files and the directory", n, len(bundle.Files))
	}
	if err := bundle.WriteTarGz(path); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("overwriting: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "snapdir")
	if err := bundle.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteDir(dir); err == nil {
		t.Error("writing into a directory with files: no error")
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("snapshot directory: %v %v, want mode 0700", fi.Mode(), err)
	}
	// An empty directory of another user's is refused: they could replace the files.
	theirs := filepath.Join(dbtest.SharedTempDir(t), "theirs")
	if out, err := dbtest.AsNobody(t, "mkdir -m 0777 "+theirs); err != nil {
		t.Fatalf("as nobody: %v %s", err, out)
	}
	if err := bundle.WriteDir(theirs); err == nil || !strings.Contains(err.Error(), "belongs to uid") {
		t.Errorf("another user's directory: %v", err)
	}
}

func TestSnapshotMySQL(t *testing.T) {
	tg := myTarget(t)
	// The schema dump needs a table; the test makes its own rather than count on others'.
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(context.Background(), "CREATE TABLE IF NOT EXISTS snap_my (id int primary key, v text)"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	bundle, err := collect.Snapshot(context.Background(), tg, collect.SnapshotOptions{Kind: dbOf(tg), Interval: time.Second, TopTables: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkBundle(t, bundle, []string{"server.txt", "variables.tsv", "config_files.txt", "innodb_status_1.txt", "innodb_status_2.txt",
		"processlist.tsv", "long_running.txt", "blocked.txt", "replication.txt", "databases.txt", "tables.txt", "schema.sql",
		"logs.txt", "status_diff.tsv", "vmstat.txt", "os.txt"},
		[]string{"InnoDB", "Checkpoint age", "Binary log", "Role", "Threads", "Writeback"})
	if !strings.Contains(string(bundle.File("innodb_status_1.txt").Data), "Log sequence number") {
		t.Error("innodb_status_1.txt is not InnoDB status")
	}
}

// A server that cannot be reached: one clear error, nothing half-written.
func TestSnapshotUnreachable(t *testing.T) {
	tg, err := postgres.Open("postgres://nobody@127.0.0.1:1/none?sslmode=disable", target.Config{ConnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect.Snapshot(context.Background(), tg, collect.SnapshotOptions{Kind: dbOf(tg), Interval: time.Second}); err == nil {
		t.Fatal("no error")
	}
}
