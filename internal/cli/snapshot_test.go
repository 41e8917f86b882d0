package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

// -o DIR/ makes the directories it needs, private to their owner, and the files in
// them are private too.
func TestSnapshotOutputCreated(t *testing.T) {
	dsn := dbtest.MySQLDSN(t)
	out := filepath.Join(t.TempDir(), "reviews", "db1") + "/"
	r := fathom(t, map[string]string{}, nil, "snapshot", "--target", dsn, "-i", "1s", "-n", "3", "-o", out)
	if r.code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, d := range []string{filepath.Dir(filepath.Dir(out)), filepath.Dir(out)} {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(d) != filepath.Base(t.TempDir()) && st.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", d, st.Mode().Perm())
		}
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		seen[e.Name()] = true
		if info, _ := e.Info(); info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", e.Name(), info.Mode().Perm())
		}
		if strings.HasPrefix(e.Name(), ".fathom-snapshot-probe") {
			t.Errorf("the writability probe %s was left behind", e.Name())
		}
	}
	for _, f := range []string{"status_3.tsv", "innodb_status_3.txt", "users.txt", "network.txt", "config_files.txt", "binlog_digest.txt"} {
		if !seen[f] {
			t.Errorf("no %s in %s", f, out)
		}
	}
}

// An -o that cannot be written fails at once, before connecting or sampling: one
// line, exit 2. The target is a closed port with a long connect timeout, so reaching
// it would show.
func TestSnapshotOutputUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{filepath.Join(file, "sub") + "/", filepath.Join(file, "sub", "x.tar.gz"), file} {
		r := fathom(t, map[string]string{}, nil, "snapshot", "--target", "postgres://nobody@127.0.0.1:1/none", "--connect-timeout", "60s", "-o", out)
		if r.code != exitUsage {
			t.Errorf("-o %s: exit %d, want %d\n%s", out, r.code, exitUsage, r.stderr)
		}
		msg := strings.TrimSpace(r.stderr)
		if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "-o "+out) || strings.Contains(msg, "snapshot of") {
			t.Errorf("-o %s: want one line naming it, before sampling:\n%s", out, r.stderr)
		}
	}
	if r := fathom(t, map[string]string{}, nil, "snapshot", "--target", "postgres://nobody@127.0.0.1:1/none", "-n", "1", "-o", filepath.Join(dir, "x")); r.code != exitUsage || !strings.Contains(r.stderr, "--samples 1") {
		t.Errorf("--samples 1: %d %s", r.code, r.stderr)
	}
}
