package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The default store is fathom.db in the user's data directory, whatever the working
// directory; without a home it is ./fathom.db as before.
func TestDefaultStore(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "freebsd" {
		t.Skip("the XDG rules are for Linux and the BSDs; macOS and Windows have their own (see defaultStore)")
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/ann"}, "/home/ann/.local/share/fathom/fathom.db"},
		{map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "/data/ann"}, "/data/ann/fathom/fathom.db"},
		{map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "rel/dir"}, "/home/ann/.local/share/fathom/fathom.db"},
		{map[string]string{}, "fathom.db"},
		{map[string]string{"HOME": "/"}, "fathom.db"},
	} {
		e := &Env{Getenv: func(k string) string { return c.env[k] }}
		if got := defaultStore(e); got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
}

// A user with runs in ./fathom.db (the old per-directory default) is told, once, at the
// end of a command that used the default store, where the store is now and how to keep
// the old runs; not when --store or FATHOM_STORE names a store, nor on a refusal.
func TestOldStoreNote(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	t.Chdir(dir)
	env := map[string]string{"HOME": home}
	if r := fathom(t, env, nil, "runs", "--store", "fathom.db"); r.code != 0 || r.stderr != "" {
		t.Fatalf("runs --store fathom.db: exit %d, stderr %q", r.code, r.stderr)
	}
	r := fathom(t, env, nil, "runs")
	def := filepath.Join(home, ".local", "share", "fathom", "fathom.db")
	if r.code != 0 || !strings.Contains(r.stdout, def) {
		t.Fatalf("runs: exit %d, stdout %q: not the store in the data directory", r.code, r.stdout)
	}
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "fathom: note: ") ||
		!strings.Contains(lines[0], "--store fathom.db") || !strings.Contains(lines[0], "fathom store copy fathom.db "+def) {
		t.Errorf("the note: %q", r.stderr)
	}
	if fi, err := os.Stat(filepath.Dir(def)); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the data directory %v %v: want it private", fi, err)
	}
	for _, args := range [][]string{{"runs", "--store", "fathom.db"}, {"runs", "--limit", "-1"}} {
		if r := fathom(t, env, nil, args...); strings.Contains(r.stderr, "note:") {
			t.Errorf("%v: %q", args, r.stderr)
		}
	}
	env["FATHOM_STORE"] = filepath.Join(home, "other.db")
	if r := fathom(t, env, nil, "runs"); strings.Contains(r.stderr, "note:") {
		t.Errorf("with FATHOM_STORE: %q", r.stderr)
	}
}
