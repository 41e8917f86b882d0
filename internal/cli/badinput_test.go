package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// Each user mistake gets one clear line naming the fix, a non-zero exit and no stack
// trace; a password in the DSN never shows.
func TestBadInput(t *testing.T) {
	sqlite := "sqlite:" + filepath.Join(t.TempDir(), "empty.db")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown command", []string{"frobnicate"}, exitUsage, "unknown command"},
		{"unknown workload", []string{"run", "--target", sqlite, "--workload", "nope"}, exitUsage, "nope"},
		{"unknown flag", []string{"run", "--clients-please", "3"}, exitUsage, "unknown flag"},
		{"unknown workload option", []string{"run", "--target", sqlite, "--set", "bogus=1"}, exitUsage, "bogus"},
		{"zero clients", []string{"run", "--target", sqlite, "-c", "0"}, exitUsage, "clients must be at least 1"},
		{"negative rate", []string{"run", "--target", sqlite, "-R", "-5"}, exitUsage, "rate"},
		{"bad duration", []string{"run", "--target", sqlite, "-T", "soon"}, exitUsage, "not a duration"},
		{"time and transactions", []string{"run", "--target", sqlite, "-T", "5", "-t", "10"}, exitUsage, "either --time or --transactions"},
		{"zero max tries", []string{"run", "--target", sqlite, "--max-tries", "0"}, exitUsage, "max-tries"},
		{"bad scale", []string{"prepare", "--target", sqlite, "--scale", "0"}, exitUsage, "scale"},
		{"bad label", []string{"run", "--target", sqlite, "--label", "nokey"}, exitUsage, "key=value"},
		{"malformed DSN", []string{"run", "--target", "postgres://bob:hunter2@[::1/x"}, exitUsage, "postgres"},
		{"unknown scheme", []string{"run", "--target", "oracle://scott:tiger@db/x"}, exitUsage, "unknown target"},
		{"tables missing", []string{"run", "--target", sqlite, "--workload", "tpcb"}, exitFailure, "fathom prepare"},
		{"server not listening", []string{"run", "--target", "postgres://bob:hunter2@127.0.0.1:1/x?connect_timeout=2"}, exitFailure, "cannot connect"},
		{"mysql not listening", []string{"run", "--target", "mysql://bob:hunter2@127.0.0.1:1/x"}, exitFailure, "cannot connect"},
		{"no such run", []string{"show", "999"}, exitUsage, "999"},
		{"bad run id", []string{"show", "abc"}, exitUsage, "not a run id"},
		{"export format", []string{"export", "1", "--format", "xml"}, exitUsage, "csv, json"},
		// Values that cannot be right (issue 11): refused as flags, before anything.
		{"zero time", []string{"run", "--target", sqlite, "-T", "0"}, exitUsage, "above zero"},
		{"zero transactions", []string{"run", "--target", sqlite, "-t", "0"}, exitUsage, "above zero"},
		{"negative transactions", []string{"run", "--target", sqlite, "-t", "-3"}, exitUsage, "above zero"},
		{"zero reconnect timeout", []string{"run", "--target", sqlite, "--reconnect-timeout", "0"}, exitUsage, "reconnect-timeout"},
		{"negative reconnect timeout", []string{"run", "--target", sqlite, "--reconnect-timeout", "-5s"}, exitUsage, "negative"},
		{"zero connect timeout", []string{"run", "--target", sqlite, "--connect-timeout", "0s"}, exitUsage, "connect-timeout"},
		{"zero report interval", []string{"run", "--target", sqlite, "-P", "0"}, exitUsage, "report-interval"},
		{"zero collect timeout", []string{"run", "--target", sqlite, "--collect-timeout", "0"}, exitUsage, "collect-timeout"},
		{"latency limit without rate", []string{"run", "--target", sqlite, "-L", "5ms"}, exitUsage, "goes with --rate"},
		{"zero latency limit", []string{"run", "--target", sqlite, "-R", "10", "-L", "0"}, exitUsage, "latency-limit"},
		{"zero stall window", []string{"run", "--target", sqlite, "--stall-window", "0"}, exitUsage, "stall-window"},
		{"stall threshold above 1", []string{"run", "--target", sqlite, "--stall-threshold", "1.5"}, exitUsage, "fraction"},
		{"zero stalls window", []string{"stalls", "1", "--window", "0"}, exitUsage, "window"},
		{"zero watch time", []string{"watch", "--target", sqlite, "-T", "0"}, exitUsage, "above zero"},
		{"zero heartbeat interval", []string{"heartbeat", "--target", "postgres://u@127.0.0.1:1/x", "--interval", "0"}, exitUsage, "interval"},
		{"more clients than open files", []string{"run", "--target", sqlite, "-c", "100000"}, exitUsage, "ulimit -n"},
		// Issue 15's bad inputs.
		{"empty store", []string{"run", "--target", sqlite, "--store", ""}, exitUsage, "store path is empty"},
		{"empty store for runs", []string{"runs", "--store", ""}, exitUsage, "store path is empty"},
		{"negative max points", []string{"report", "last", "--max-points", "-1"}, exitUsage, "max-points"},
		{"bad status filter", []string{"runs", "--status", "done"}, exitUsage, "complete, interrupted, failed, aborted or running"},
		{"bad postgres port", []string{"run", "--target", "postgres://bob:hunter2@127.0.0.1:99999/x"}, exitUsage, "port is not a number from 1 to 65535"},
		{"bad postgres port word", []string{"run", "--target", "host=127.0.0.1 port=abc password=hunter2"}, exitUsage, "port is not a number from 1 to 65535"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := storeEnv(t)
			// Each case its own SQLite target, so that what one case creates is its own.
			own := "sqlite:" + filepath.Join(t.TempDir(), "empty.db")
			args := slices.Clone(c.args)
			for i := range args {
				if args[i] == sqlite {
					args[i] = own
				}
			}
			r := fathom(t, env, nil, args...)
			oneLine(t, r, c.code, c.want)
			if c.code == exitUsage && c.args[0] != "show" {
				// Nothing was spent before the refusal: no target or store created.
				for _, p := range []string{strings.TrimPrefix(own, "sqlite:"), env["FATHOM_STORE"]} {
					if _, err := os.Stat(p); err == nil {
						t.Errorf("%s was created before the refusal", p)
					}
				}
			}
			for _, secret := range []string{"hunter2", "tiger"} {
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("the password %q shows: %q", secret, r.stdout+r.stderr)
				}
			}
		})
	}
}

// A wrong password is one line that names the problem and does not show the password.
func TestWrongPassword(t *testing.T) {
	t.Run("mysql", func(t *testing.T) {
		base := dbtest.MySQLDSN(t)
		u, _ := url.Parse(base)
		cfg := mysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr = u.User.Username(), "tcp", u.Host
		c, _ := mysql.NewConnector(cfg)
		db := sql.OpenDB(c)
		defer db.Close()
		ctx := context.Background()
		if _, err := db.ExecContext(ctx, "CREATE USER IF NOT EXISTS 'fathom_pw'@'%' IDENTIFIED BY 'right-one'"); err != nil {
			t.Fatal(err)
		}
		defer db.ExecContext(ctx, "DROP USER IF EXISTS 'fathom_pw'@'%'")
		u.User = url.UserPassword("fathom_pw", "Wr0ngPassw0rd")
		r := fathom(t, storeEnv(t), nil, "run", "--target", u.String())
		oneLine(t, r, exitFailure, "cannot connect")
		if !strings.Contains(r.stderr, "password") || strings.Contains(r.stderr, "Wr0ngPassw0rd") {
			t.Errorf("want a password hint without the password: %q", r.stderr)
		}
	})
}

// Help texts show real placeholders and one default each, and a misspelt command or
// flag gets a suggestion.
func TestHelpTextsAndSuggestions(t *testing.T) {
	env := storeEnv(t)
	for _, c := range []string{"run", "prepare", "quickstart", "report", "compare", "experiment", "watch", "snapshot", "stalls", "check", "instance", "cleanup"} {
		r := fathom(t, env, nil, strings.Fields(c+" --help")...)
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.Count(l, "(default") > 1 || regexp.MustCompile(`--[a-z-]+ fathom `).MatchString(l) {
				t.Errorf("%s --help: %q", c, strings.TrimSpace(l))
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reprot"}, "did you mean report?"},
		{[]string{"run", "--clinets", "3"}, "did you mean --clients?"},
		{[]string{"experiment", "--chek", "x.yaml"}, "did you mean --check?"},
		// Every other name a user types (issue 30).
		{[]string{"run", "-w", "tpcbb"}, "did you mean tpcb?"},
		{[]string{"history", "--metric", "tsp"}, "did you mean tps?"},
		{[]string{"export", "last", "-f", "cvs"}, "did you mean csv?"},
		{[]string{"run", "--target", "sqlite:" + filepath.Join(t.TempDir(), "t.db"), "--collect", "os_proces"}, "did you mean os_process?"},
	} {
		r := fathom(t, env, nil, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: %d %q, want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	// A series name, from the store's runs.
	tgt := "sqlite:" + filepath.Join(t.TempDir(), "s.db")
	if r := fathom(t, env, nil, "prepare", "-w", "oltp_point_select", "--table-size", "100", "--target", tgt); r.code != 0 {
		t.Fatalf("prepare: %d %s", r.code, r.stderr)
	}
	if r := fathom(t, env, nil, "run", "-w", "oltp_point_select", "--target", tgt, "-T", "1", "-q", "--label", "series=nightly"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	if r := fathom(t, env, nil, "history", "nightlly"); r.code != exitUsage || !strings.Contains(r.stderr, "(did you mean nightly?)") {
		t.Errorf("history nightlly: %d %q", r.code, r.stderr)
	}
	// A report's axis, from the runs' labels.
	if r := fathom(t, env, nil, "run", "-w", "oltp_point_select", "--target", tgt, "-T", "1", "-q", "--label", "series=nightly"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	if r := fathom(t, env, nil, "report", "1-2", "--axis", "serie", "-o", filepath.Join(t.TempDir(), "r")); r.code != exitUsage || !strings.Contains(r.stderr, "(did you mean series?)") {
		t.Errorf("report --axis serie: %d %q", r.code, r.stderr)
	}
}

// Each way a --store path cannot work gets its own true line (issue 15), exit 2,
// before any target is touched; a '?', '#' or '%' in the path is part of the name.
func TestStorePathMistakes(t *testing.T) {
	dir := t.TempDir()
	sqlite := "sqlite:" + filepath.Join(dir, "target.db")
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte("this is not a database, just some text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.db")
	{ // a real store whose pages are overwritten after the header
		st, err := stores.Open(damaged)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		_ = os.Remove(damaged + "-wal")
		_ = os.Remove(damaged + "-shm")
		b, err := os.ReadFile(damaged)
		if err != nil {
			t.Fatal(err)
		}
		for i := 100; i < len(b); i++ {
			b[i] = 0xA5
		}
		if err := os.WriteFile(damaged, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	foreign := filepath.Join(dir, "foreign.db") // someone else's SQLite database
	if r := fathom(t, nil, nil, "prepare", "--target", "sqlite:"+foreign, "--workload", "oltp_point_select", "--table-size", "10"); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	for _, c := range []struct {
		name, store string
		code        int
		want        string
	}{
		{"empty", "", exitUsage, "store path is empty"},
		{"directory", dir, exitUsage, "is a directory"},
		{"not sqlite", garbage, exitUsage, "is not a SQLite database"},
		{"damaged", damaged, exitFailure, "is damaged"},
		{"foreign", foreign, exitUsage, "tables of its own but not a fathom results database"},
		{"under a file", filepath.Join(garbage, "x.db"), exitUsage, garbage + " is a file, not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range [][]string{{"runs"}, {"run", "--target", sqlite}} {
				r := fathom(t, nil, nil, append(args, "--store", c.store)...)
				oneLine(t, r, c.code, c.want)
				if strings.Contains(r.stderr, "is not a fathom results database (") {
					t.Errorf("the old catch-all message: %q", r.stderr)
				}
			}
			if _, err := os.Stat(strings.TrimPrefix(sqlite, "sqlite:")); err == nil {
				t.Errorf("the target was created before the store was refused")
			}
		})
	}
	t.Run("question mark", func(t *testing.T) {
		odd := filepath.Join(dir, "what?is#this%20.db")
		r := fathom(t, map[string]string{"FATHOM_STORE": odd}, nil, "run", "--target", sqlite, "-w", "oltp_point_select", "--table-size", "10", "-T", "1", "-q")
		if r.code != exitFailure || !strings.Contains(r.stderr, "fathom prepare") { // the target is not prepared; the store opened
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if r := fathom(t, nil, nil, "prepare", "--target", sqlite, "-w", "oltp_point_select", "--table-size", "10"); r.code != 0 {
			t.Fatal(r.stderr)
		}
		r = fathom(t, map[string]string{"FATHOM_STORE": odd}, nil, "run", "--target", sqlite, "-w", "oltp_point_select", "--table-size", "10", "-T", "1", "-q")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if _, err := os.Stat(odd); err != nil {
			t.Fatalf("the store is not at the path given: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "what")); err == nil {
			t.Errorf("the path was cut at the '?'")
		}
		if r := fathom(t, map[string]string{"FATHOM_STORE": odd}, nil, "runs"); !strings.Contains(r.stdout, "complete") {
			t.Errorf("runs: %s%s", r.stdout, r.stderr)
		}
	})
	t.Run("unwritable", func(t *testing.T) {
		// As another user (nobody), in a directory only root may write.
		setpriv, err := exec.LookPath("setpriv")
		if err != nil || os.Getuid() != 0 {
			if dbtest.Required() {
				t.Fatal("needs root and setpriv to run as nobody (FATHOM_TEST_REQUIRE=1)")
			}
			t.Skip("needs root and setpriv to run as nobody")
		}
		for _, d := range []string{dir, filepath.Dir(dir)} { // t.TempDir's are 0700
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		locked := filepath.Join(dir, "locked")
		if err := os.Mkdir(locked, 0o755); err != nil {
			t.Fatal(err)
		}
		exe, _ := os.Executable()
		for _, c := range []struct{ path, want string }{
			{filepath.Join(locked, "fathom.db"), "directory " + locked + " is not writable"},
			{damaged, "it belongs to uid 0, not to you"}, // 0600, root's: another user's store is refused before it is opened
		} {
			js, _ := json.Marshal([]string{"runs", "--store", c.path})
			cmd := exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", exe, "-test.run=^TestHelperFathomProcess$")
			cmd.Env = []string{"FATHOM_HELPER_ARGS=" + string(js), "PATH=/usr/bin:/bin"}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("as nobody, runs --store %s: %v, %q; want exit 2 and %q", c.path, err, stderr.String(), c.want)
			}
		}
	})
}
