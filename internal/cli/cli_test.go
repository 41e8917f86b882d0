package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
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
		Getenv: func(k string) string { return env[k] },
		Now:    time.Now,
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
