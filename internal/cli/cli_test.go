package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a run's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type result struct {
	code           int
	stdout, stderr string
}

// fathom runs the CLI in-process with args and a private environment.
func fathom(t *testing.T, env map[string]string, interrupt <-chan struct{}, args ...string) result {
	t.Helper()
	var out, errb syncBuffer
	e := &Env{
		Args:   args,
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string { return env[k] }, Environ: os.Environ(),
		Now: time.Now,
		Interrupts: func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			if interrupt != nil {
				go func() {
					select {
					case <-interrupt:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			return ctx, cancel
		},
	}
	code := Run(context.Background(), e)
	r := result{code, out.String(), errb.String()}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
		t.Fatalf("fathom %v printed a stack trace:\n%s", args, r.stderr)
	}
	return r
}

// summary parses the --json summary on stdout.
func summary(t *testing.T, r result) measure.Summary {
	t.Helper()
	var s measure.Summary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("stdout is not a JSON summary: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return s
}

func storeEnv(t *testing.T) map[string]string {
	return map[string]string{"FATHOM_STORE": filepath.Join(t.TempDir(), "fathom.db")}
}

// oneLine asserts a user-facing failure: the code, one line on stderr containing want.
func oneLine(t *testing.T, r result, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d (stderr: %q)", r.code, code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "fathom: ") {
		t.Errorf("want one error line on stderr, got %q", r.stderr)
	}
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not say %q", r.stderr, want)
	}
}

// waitFor polls cond until it holds, failing the test after two minutes: tests wait
// for conditions, never for a time that a busy machine may not keep.
// From another goroutine than the test's, use poll (t.Fatal must not be called there).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := poll(what, cond); err != nil {
		t.Fatal(err)
	}
}

func poll(what string, cond func() bool) error {
	return dbtest.Poll(2*time.Minute, 20*time.Millisecond, what, cond)
}

// storedIntervals is how many intervals the store at path holds for run id, and how
// many transactions they count (0, 0 while the store or the run is not there yet).
func storedIntervals(path string, id int64) (n int, txns int64) {
	st, err := stores.Open(path)
	if err != nil {
		return 0, 0
	}
	defer st.Close()
	ivs, err := st.Intervals(context.Background(), id)
	if err != nil {
		return 0, 0
	}
	for _, iv := range ivs {
		for _, ty := range iv.Types {
			txns += ty.OK
		}
	}
	return len(ivs), txns
}
