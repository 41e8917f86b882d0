package cli

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookSecretsMasked: passwords in shell hooks, SQL hooks and their outputs are
// masked on screen, in `experiments --json` and in the store (its bytes, WAL too).
func TestHookSecretsMasked(t *testing.T) {
	const pw = "Hunter2pw1"
	env := storeEnv(t)
	dir := t.TempDir()
	text := fmt.Sprintf(`experiment: secrets
target: sqlite:%s?busy_timeout=5000
workload: tpcb
options: {scale: 1}
transactions: 5
report_interval: 100ms
repetitions: 1
hooks:
  before_experiment:
    - shell: MYSQL_PWD=%[2]s sh -c 'echo "pwd is $MYSQL_PWD"; echo mysql -uroot -p%[2]s --password=%[2]s'
    - shell: PGPASSWORD='%[2]s' env | grep PGPASSWORD
    - shell: |
        echo curl -u admin:%[2]s -H "'Authorization: Bearer %[2]s'" http://127.0.0.1:1/; printf 'admin:%[2]s' | base64
  before_run:
    - sql: SELECT 'host=db password=%[2]s' AS dsn
  after_experiment:
    - shell: echo "CREATE USER x IDENTIFIED BY '%[2]s'"; echo "postgres://u:%[2]s@db/x"; exit 3
`, filepath.Join(dir, "t.db"), pw)
	plan := writePlan(t, text)
	r := fathom(t, env, nil, "experiment", plan)
	if !strings.Contains(r.stdout+r.stderr, "hook 1 (shell") {
		t.Fatalf("hooks did not run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "xxxxx") {
		t.Errorf("no masked value on screen:\n%s\n%s", r.stdout, r.stderr)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("admin:" + pw)) // what curl -u sends
	if strings.Contains(r.stdout+r.stderr, pw) || strings.Contains(r.stdout+r.stderr, basic) {
		t.Errorf("the password is on screen:\n%s\n%s", r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"experiments", "secrets", "--json"}, {"experiments", "secrets"}} {
		r := fathom(t, env, nil, args...)
		if r.code != 0 || strings.Contains(r.stdout+r.stderr, pw) || strings.Contains(r.stdout+r.stderr, basic) {
			t.Errorf("%v: exit %d, shows the password:\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	st := openTestStore(t, env)
	exp, err := st.ExperimentByName(t.Context(), "secrets")
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := st.ExperimentHooks(t.Context(), exp.ID)
	if err != nil || len(hooks) < 4 {
		t.Fatalf("hooks stored: %d %v", len(hooks), err)
	}
	for _, h := range hooks {
		if !strings.Contains(h.Command+h.Output, "xxxxx") {
			t.Errorf("hook %s %d: nothing masked in %q / %q", h.Phase, h.Index, h.Command, h.Output)
		}
	}
	st.Close()
	for _, f := range []string{env["FATHOM_STORE"], env["FATHOM_STORE"] + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && f == env["FATHOM_STORE"] {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(pw)) || bytes.Contains(b, []byte(basic)) {
			t.Errorf("%s holds the password", f)
		}
	}
}
