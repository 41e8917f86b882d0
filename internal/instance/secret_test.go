package instance_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	. "github.com/fathom-lab/fathom/internal/instance"
)

// TestClosedToOtherUsers: a throwaway server accepts fathom's own connections and
// the server's own clients given HookEnv, and nothing from another local user: no
// login over TCP or the socket as the superuser, anonymously, or with the password
// file (which they cannot read).
func TestClosedToOtherUsers(t *testing.T) {
	for _, k := range []Kind{Postgres, MariaDB} {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			needKind(t, k)
			ctx := context.Background()
			base := testDir(t)
			inst, err := Create(ctx, Options{Kind: k, Name: "closed", Dir: base})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { inst.Remove(context.Background()) })
			if err := inst.Start(ctx); err != nil {
				t.Fatal(err)
			}
			// fathom itself gets in, with a DSN that holds no password.
			pw := inst.Password()
			if len(pw) < 32 {
				t.Fatalf("password %d characters long", len(pw))
			}
			if strings.Contains(inst.DSN(), pw) {
				t.Fatalf("DSN %q holds the password", inst.DSN())
			}
			connect(t, inst).Close()
			secret := inst.SecretFile()
			if fi, err := os.Stat(secret); err != nil || fi.Mode().Perm() != 0o600 || safefileOwner(fi) != os.Geteuid() {
				t.Errorf("secret file %s: %v %v, want 0600 and fathom's user", secret, fi.Mode(), err)
			}
			if fi, err := os.Stat(inst.Path); err != nil || fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("instance directory %s mode %v: want it private", inst.Path, fi.Mode())
			}
			// The server's own clients, with HookEnv, as hooks run them.
			port := strconv.Itoa(inst.Port)
			client := exec.Command("psql", "-XAtc", "select current_user")
			if k == MariaDB {
				client = exec.Command("mariadb", "--no-defaults", "-uroot", "-Nse", "select current_user()")
			}
			if client.Env, err = inst.HookEnv(os.Environ(), t.TempDir()); err != nil {
				t.Fatal(err)
			}
			if out, err := client.CombinedOutput(); err != nil {
				t.Errorf("%s with HookEnv: %v %s", client.Args[0], err, out)
			}
			// Another user gets nowhere.
			var attempts []string
			if k == Postgres {
				for _, u := range []string{"postgres", "nobody"} {
					attempts = append(attempts,
						"psql -Xw -h 127.0.0.1 -p "+port+" -U "+u+" -d postgres -c 'select 1'",
						"psql -Xw -h "+filepath.Dir(inst.Socket)+" -p "+port+" -U "+u+" -d postgres -c 'select 1'",
						"PGPASSFILE="+secret+" psql -Xw -h 127.0.0.1 -p "+port+" -U "+u+" -d postgres -c 'select 1'")
				}
			} else {
				for _, u := range []string{"root", "", "nobody"} {
					attempts = append(attempts,
						"mariadb --no-defaults -h 127.0.0.1 -P "+port+" -u '"+u+"' --password= -e 'select 1'",
						"mariadb --no-defaults -S "+inst.Socket+" -u '"+u+"' --password= -e 'select 1'",
						"mariadb --defaults-file="+secret+" -h 127.0.0.1 -P "+port+" -u '"+u+"' -e 'select 1'")
				}
			}
			attempts = append(attempts, "cat "+secret)
			for _, a := range attempts {
				if out, err := dbtest.AsNobody(t, a); err == nil || strings.Contains(out, pw) {
					t.Errorf("as nobody, %s: succeeded: %s", a, out)
				}
			}
			// Nothing listens beyond loopback.
			out, err := exec.Command("ss", "-Hltn").Output()
			if err != nil {
				t.Fatalf("ss (iproute2) lists listening sockets: %v", err)
			}
			seen := false
			for _, line := range strings.Split(string(out), "\n") {
				f := strings.Fields(line)
				if len(f) < 4 || !strings.HasSuffix(f[3], ":"+port) {
					continue
				}
				seen = true
				if !strings.HasPrefix(f[3], "127.0.0.1:") {
					t.Errorf("listening beyond loopback: %s", line)
				}
			}
			if !seen {
				t.Errorf("nothing listens on port %s:\n%s", port, out)
			}
		})
	}
}

func safefileOwner(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// TestBaseOfAnotherUser: a base directory of instances that another user made (like
// a /tmp/fathom-instances created before fathom's first run) is refused in one line.
func TestBaseOfAnotherUser(t *testing.T) {
	needKind(t, Postgres)
	base := filepath.Join(dbtest.SharedTempDir(t), "fathom-instances")
	if out, err := dbtest.AsNobody(t, "mkdir -m 0777 "+base); err != nil {
		t.Fatalf("as nobody: %v %s", err, out)
	}
	_, err := Create(context.Background(), Options{Kind: Postgres, Name: "x", Dir: base})
	if err == nil || !strings.Contains(err.Error(), "refusing "+base+": it belongs to uid") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Create in another user's directory: %v", err)
	}
	if _, err := List(base); err == nil {
		t.Error("List in another user's directory: no error")
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("files left in another user's directory: %v", ents)
	}
}
