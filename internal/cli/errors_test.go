package cli

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/serve"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// badStatement is what a failed statement looks like on each target: the code and a
// piece of the message the server gives for `SELEC 1`.
var badStatement = map[string]struct{ code, msg string }{
	"sqlite":   {"SQLITE_ERROR", `near "SELEC": syntax error`},
	"postgres": {"42601", `syntax error at or near "SELEC"`},
	"mysql":    {"1064", "You have an error in your SQL syntax"},
}

// A custom script whose statement the server rejects: the run fails with exit 3 (none
// of its transactions succeeded, or its clients aborted as pgbench aborts them), and
// the server's message with its code is on stderr as it happened, in the --json
// summary, in `show` and `show --json`, in the report's files and in serve's API.
func TestRejectedScriptSpeaks(t *testing.T) {
	for _, tg := range cliTargets {
		t.Run(tg.name, func(t *testing.T) {
			dsn := tg.dsn(t)
			env := storeEnv(t)
			dir := t.TempDir()
			script := filepath.Join(dir, "bad.sql")
			if err := os.WriteFile(script, []byte("SELEC 1;\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			want := badStatement[tg.name]
			r := fathom(t, env, nil, "run", "--target", dsn, "-f", script, "-c", "2", "-t", "5", "--json")
			if r.code != exitErrors {
				t.Fatalf("exit %d, want %d (ExitErrors)\nstderr: %s", r.code, exitErrors, r.stderr)
			}
			s := summary(t, r)
			if s.Status != "failed" || !strings.Contains(s.Reason, want.msg) || !strings.Contains(s.Reason, want.code) {
				t.Errorf("status %s, reason %q; want failed naming %s %q", s.Status, s.Reason, want.code, want.msg)
			}
			if s.Transactions != 0 || len(s.FirstErrors) != 1 {
				t.Fatalf("%d transactions, first errors %+v", s.Transactions, s.FirstErrors)
			}
			e := s.FirstErrors[0]
			if e.Code != want.code || !strings.Contains(e.Message, want.msg) || !strings.Contains(e.Where, "bad.sql line 1") || e.Count+s.ErrorsUnlisted != s.Errors {
				t.Errorf("first error %+v (errors %d, unlisted %d)", e, s.Errors, s.ErrorsUnlisted)
			}
			live := "fathom: error: client "
			if !strings.Contains(r.stderr, live) || !strings.Contains(r.stderr, want.msg) || strings.Count(r.stderr, live) != 1 {
				t.Errorf("stderr does not print the error once as it happened:\n%s", r.stderr)
			}

			sh := fathom(t, env, nil, "show", "last")
			if sh.code != 0 || !strings.Contains(sh.stdout, "first errors") || !strings.Contains(sh.stdout, want.code+": ") ||
				!strings.Contains(sh.stdout, want.msg) || !strings.Contains(sh.stdout, "bad.sql line 1: SELEC 1") {
				t.Errorf("show: exit %d\n%s", sh.code, sh.stdout)
			}
			sj := fathom(t, env, nil, "show", "last", "--json")
			var shown struct {
				Summary struct {
					FirstErrors []struct{ Code, Message string } `json:"first_errors"`
				} `json:"summary"`
			}
			if err := json.Unmarshal([]byte(sj.stdout), &shown); err != nil || len(shown.Summary.FirstErrors) != 1 || shown.Summary.FirstErrors[0].Code != want.code {
				t.Errorf("show --json: %v\n%s", err, sj.stdout)
			}

			out := filepath.Join(dir, "report")
			if rep := fathom(t, env, nil, "report", "last", "-o", out); rep.code != 0 {
				t.Fatalf("report: %s", rep.stderr)
			}
			for _, f := range []string{"index.html", "summary.md"} {
				b, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				text := string(b)
				if f == "index.html" {
					text = html.UnescapeString(text)
				}
				if !strings.Contains(text, want.msg) || !strings.Contains(text, want.code) {
					t.Errorf("%s lacks the error %s %q", f, want.code, want.msg)
				}
			}

			st, err := stores.Open(env["FATHOM_STORE"])
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			srv, err := serve.New(serve.Options{Store: st})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			defer func() { srv.Close(); hs.Close() }()
			resp, err := hs.Client().Get(fmt.Sprintf("%s/api/runs/%d", hs.URL, s.RunID))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var page struct {
				Errors []struct{ Code, Message string } `json:"errors"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != 200 || len(page.Errors) != 1 ||
				page.Errors[0].Code != want.code || !strings.Contains(page.Errors[0].Message, want.msg) {
				t.Errorf("serve /api/runs/%d: %d %v %+v", s.RunID, resp.StatusCode, err, page.Errors)
			}
		})
	}
}

// sometimes is a workload file whose one statement fails when its value v is 0 (one
// in four), with an error of the target's own.
func sometimes(t *testing.T, kind string) (path, code string) {
	t.Helper()
	sql, code := "SELECT abs(:v - 9223372036854775807 - 1)", "SQLITE_ERROR" // integer overflow
	switch kind {
	case "postgres":
		sql, code = "SELECT 1 / :v", "22012" // division_by_zero
	case "mysql":
		sql, code = "SELECT CAST(:v AS UNSIGNED) - 1", "1690" // BIGINT UNSIGNED value is out of range
	}
	text := fmt.Sprintf(`name: sometimes
transactions:
  - name: pick
    autocommit: true
    steps:
      - sql: %s
        values:
          v: {uniform: [0, 3]}
`, sql)
	path = filepath.Join(t.TempDir(), "sometimes.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, code
}

// A few errors among successes: the run is complete (exit 0) and lists them, counted
// as the summary counts them. With --max-error-rate below its error rate it fails
// with exit 4 and says why; above, it is complete.
func TestErrorsAmongSuccessesAndThreshold(t *testing.T) {
	for _, tg := range cliTargets {
		t.Run(tg.name, func(t *testing.T) {
			dsn := tg.dsn(t)
			env := storeEnv(t)
			wl, code := sometimes(t, tg.name)
			args := []string{"run", "--target", dsn, "--workload", wl, "-c", "2", "-t", "200", "--seed", "7", "--json", "-q"}
			r := fathom(t, env, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			s := summary(t, r)
			if s.Status != "complete" || s.Transactions == 0 || s.Failed == 0 {
				t.Fatalf("status %s, %d transactions, %d failed; want complete with some of each", s.Status, s.Transactions, s.Failed)
			}
			if len(s.FirstErrors) != 1 || s.FirstErrors[0].Code != code || s.FirstErrors[0].Count != s.Errors || s.FirstErrors[0].Txn != "pick" {
				t.Errorf("first errors %+v; want one %s counted %d times in pick", s.FirstErrors, code, s.Errors)
			}
			rate := 100 * float64(s.Failed) / float64(s.Failed+s.Transactions)
			if s.ErrorRate < rate-0.001 || s.ErrorRate > rate+0.001 {
				t.Errorf("error rate %v, want %v", s.ErrorRate, rate)
			}

			// The same seed draws the same values: the same errors.
			low := fmt.Sprintf("%g", rate/2)
			r = fathom(t, env, nil, append(args, "--max-error-rate", low+"%")...)
			if r.code != exitThreshold {
				t.Fatalf("--max-error-rate %s%%: exit %d, want %d\n%s", low, r.code, exitThreshold, r.stderr)
			}
			s = summary(t, r)
			if s.Status != "failed" || !strings.Contains(s.Reason, "above the maximum of "+low+"%") || !strings.Contains(s.Reason, code) ||
				s.MaxErrorRate == nil || *s.MaxErrorRate != rate/2 {
				t.Errorf("status %s, reason %q, max %v", s.Status, s.Reason, s.MaxErrorRate)
			}
			if !strings.Contains(r.stderr, "above the maximum") {
				t.Errorf("stderr does not say why:\n%s", r.stderr)
			}
			r = fathom(t, env, nil, append(args, "--max-error-rate", "90")...)
			if r.code != 0 || summary(t, r).Status != "complete" {
				t.Errorf("--max-error-rate 90: exit %d\n%s", r.code, r.stderr)
			}
		})
	}
}

// A script mistake in one client (a division by zero in \set, which pgbench aborts the
// client for) aborts that client only: the others run their transactions, and the run
// fails with exit 3, saying how many clients aborted and why.
func TestOneClientAborts(t *testing.T) {
	env := storeEnv(t)
	script := filepath.Join(t.TempDir(), "abort.sql")
	if err := os.WriteFile(script, []byte("\\if :client_id = 1\n\\set x 1 / 0\n\\endif\nSELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	r := fathom(t, env, nil, "run", "--target", dsn, "-f", script, "-c", "3", "-t", "50", "--json", "-q")
	if r.code != exitErrors {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitErrors, r.stderr)
	}
	s := summary(t, r)
	if s.Status != "failed" || s.ClientsAborted != 1 || !strings.Contains(s.Reason, "clients aborted: 1 of 3") || !strings.Contains(s.Reason, "abort.sql line 2") {
		t.Errorf("status %s, %d aborted, reason %q", s.Status, s.ClientsAborted, s.Reason)
	}
	if s.Transactions != 100 {
		t.Errorf("%d transactions; want the other two clients' 100", s.Transactions)
	}
	if len(s.FirstErrors) != 1 || !s.FirstErrors[0].Aborted || s.FirstErrors[0].Client != 1 {
		t.Errorf("first errors %+v", s.FirstErrors)
	}
	sh := fathom(t, env, nil, "show", "last")
	if !strings.Contains(sh.stdout, "clients aborted: 1 of 3") || !strings.Contains(sh.stdout, "it aborted its client") {
		t.Errorf("show:\n%s", sh.stdout)
	}
}
