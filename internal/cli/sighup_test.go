//go:build unix

package cli

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store/stores"
)

// SIGHUP (the terminal or the ssh session closed) stops a run as SIGTERM and Ctrl-C
// do: exit code interrupted, the summary printed, the intervals stored, the run marked
// interrupted. The signal is real: sent to this process, caught by the handler the
// real environment installs.
func TestSIGHUPStopsRunGracefully(t *testing.T) {
	env := storeEnv(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	if r := fathom(t, env, nil, "prepare", "--target", dsn, "--workload", "oltp_point_select", "--table-size", "1000"); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	var out, errb syncBuffer
	e := &Env{
		Args:   []string{"run", "--target", dsn, "--workload", "oltp_point_select", "-c", "2", "-T", "10m", "-P", "300ms", "--json"},
		Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }, Now: time.Now,
		Interrupts: osInterrupts,
	}
	hupped := make(chan time.Time, 1)
	go func() {
		// Hang up once three intervals are stored: by then the run's handler is in place.
		if err := poll("three stored intervals", func() bool { n, _ := storedIntervals(env["FATHOM_STORE"], 1); return n >= 3 }); err != nil {
			t.Error(err)
		}
		hupped <- time.Now()
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
			t.Error(err)
		}
	}()
	code := Run(context.Background(), e)
	if took := time.Since(<-hupped); took > 10*time.Second {
		t.Errorf("took %s to stop after SIGHUP", took)
	}
	r := result{code, out.String(), errb.String()}
	if r.code != exitInterrupted {
		t.Fatalf("exit %d, want %d (interrupted): %s", r.code, exitInterrupted, r.stderr)
	}
	s := summary(t, r)
	if s.Status != "interrupted" || s.Intervals < 3 || s.Transactions == 0 {
		t.Fatalf("summary: status %s, %d intervals, %d transactions", s.Status, s.Intervals, s.Transactions)
	}
	st, err := stores.Open(env["FATHOM_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.Run(context.Background(), s.RunID)
	if err != nil {
		t.Fatal(err)
	}
	ivs, err := st.Intervals(context.Background(), s.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var txns int64
	for _, iv := range ivs {
		for _, ty := range iv.Types {
			txns += ty.OK
		}
	}
	// Every interval the summary counts is stored, the one in progress at the hang-up
	// among them: the stored transactions are the summary's.
	if run.Status != "interrupted" || len(ivs) != s.Intervals || txns != s.Transactions {
		t.Fatalf("store: status %s, %d intervals with %d transactions; the summary said %d and %d", run.Status, len(ivs), txns, s.Intervals, s.Transactions)
	}
}
