package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

// TestReportOutput: report -o writes a private directory, replaces only what fathom
// wrote there (unless --force), never writes through a link, and refuses a directory
// of another user's, each refusal in one line with exit 2 before reading the store.
func TestReportOutput(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "results.db")
	env := map[string]string{}
	tg := "sqlite:" + filepath.Join(dir, "target.db")
	if r := fathom(t, env, nil, "prepare", "--target", tg, "--workload", "oltp_point_select", "--table-size", "100"); r.code != 0 {
		t.Fatalf("prepare: %d %s", r.code, r.stderr)
	}
	if r := fathom(t, env, nil, "run", "--target", tg, "--workload", "oltp_point_select", "--table-size", "100", "-T", "300ms", "-P", "100ms", "-q", "--store", st); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	out := filepath.Join(dir, "rep")
	report := func(extra ...string) result {
		return fathom(t, env, nil, append([]string{"report", "last", "--store", st, "-o", out}, extra...)...)
	}
	if r := report(); r.code != 0 {
		t.Fatalf("report: %d %s", r.code, r.stderr)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o700 {
		t.Errorf("report directory mode %04o, want 0700", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Join(out, "index.html")); fi.Mode().Perm() != 0o600 {
		t.Errorf("index.html mode %04o, want 0600", fi.Mode().Perm())
	}
	// Its own report is replaced without a word.
	if r := report(); r.code != 0 {
		t.Fatalf("second report: %d %s", r.code, r.stderr)
	}
	refused := func(name, want string, r result) {
		t.Helper()
		if r.code != exitUsage || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", name, r.code, r.stderr, want)
		}
	}
	// A file it did not write is kept, unless --force.
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o700)
	os.WriteFile(filepath.Join(other, "index.html"), []byte("mine"), 0o600)
	out = other
	refused("someone's index.html", "index.html: fathom did not write it: give --force", report())
	if b, _ := os.ReadFile(filepath.Join(other, "index.html")); string(b) != "mine" {
		t.Errorf("index.html overwritten without --force")
	}
	if r := report("--force"); r.code != 0 {
		t.Errorf("--force: %d %s", r.code, r.stderr)
	}
	// Never through a link, even with --force.
	linked := filepath.Join(dir, "linked")
	os.Mkdir(linked, 0o700)
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	os.Symlink(victim, filepath.Join(linked, "summary.md"))
	out = linked
	refused("a link as summary.md", "summary.md: it is a symbolic link", report("--force"))
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("written through a link: %q", b)
	}
	// A directory of another user's.
	pub := dbtest.SharedTempDir(t)
	out = filepath.Join(pub, "theirs")
	if o, err := dbtest.AsNobody(t, "mkdir -m 0777 "+out); err != nil {
		t.Fatalf("as nobody: %v %s", err, o)
	}
	refused("another user's directory", "it belongs to uid", report())
}

// TestStoreOfAnotherUser: a store another user made is refused with exit 2 and one
// line, by run before it connects (the target here does not even exist) and by the
// commands that read it.
func TestStoreOfAnotherUser(t *testing.T) {
	pub := dbtest.SharedTempDir(t)
	theirs := filepath.Join(pub, "theirs.db")
	if out, err := dbtest.AsNobody(t, "touch "+theirs+" && chmod 666 "+theirs); err != nil {
		t.Fatalf("as nobody: %v %s", err, out)
	}
	for _, args := range [][]string{
		{"run", "--target", "postgres://u@127.0.0.1:1/db", "-T", "1s", "--store", theirs},
		{"runs", "--store", theirs},
		{"report", "last", "--store", theirs},
	} {
		r := fathom(t, map[string]string{}, nil, args...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, "fathom: refusing "+theirs+": it belongs to uid") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 refusing the store", args, r.code, r.stderr)
		}
	}
}
