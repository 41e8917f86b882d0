// Package pgbenchtest runs the installed pgbench as the oracle of differential tests:
// the same script and options through pgbench and through fathom, compared by what
// came out. Without pgbench a test skips with a message (fails under
// FATHOM_TEST_REQUIRE=1).
package pgbenchtest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

// Outcome classes, as a pgbench user sees them.
const (
	OK      = "ok"      // the run completed (exit 0)
	Refused = "refused" // refused before running (pgbench exit 1, fathom exit 2)
	Aborted = "aborted" // a client aborted while running (pgbench exit 2, fathom exit 1)
)

// Result is what one pgbench run gave.
type Result struct {
	Class          string
	Transactions   int64 // "number of transactions actually processed"
	Failed         int64 // "number of failed transactions"
	Debug          []string
	Aborted        []int  // clients that aborted, in the order pgbench said so
	ServerError    string // the first server error's message (after "ERROR:  "), if any
	Stdout, Stderr string
}

// Path returns pgbench's path, or skips the test (fails it under FATHOM_TEST_REQUIRE=1).
func Path(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("pgbench")
	if err != nil {
		if dbtest.Required() {
			t.Fatalf("pgbench is not installed but FATHOM_TEST_REQUIRE=1: the differential tests need it (apt-get install postgresql-client)")
		}
		t.Skip("pgbench is not installed: skipping the differential test against it")
	}
	return p
}

var (
	processed = regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`)
	failedRe  = regexp.MustCompile(`(?m)^number of failed transactions: (\d+)`)
	abortedRe = regexp.MustCompile(`(?m)client (\d+) (?:script \d+ )?aborted`)
	serverErr = regexp.MustCompile(`(?m)ERROR:  (.*)$`)
)

// Run runs pgbench with args (options, -f files; -n is added) against dsn.
func Run(t testing.TB, dsn string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Path(t), append(append([]string{"-n"}, args...), dsn)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
		r.Class = OK
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		r.Class = Refused
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		r.Class = Aborted
	default:
		t.Fatalf("pgbench %v: %v\n%s", args, err, r.Stderr)
	}
	if m := processed.FindStringSubmatch(r.Stdout); m != nil {
		r.Transactions, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := failedRe.FindStringSubmatch(r.Stdout); m != nil {
		r.Failed, _ = strconv.ParseInt(m[1], 10, 64)
	}
	for _, m := range abortedRe.FindAllStringSubmatch(r.Stderr, -1) {
		n, _ := strconv.Atoi(m[1])
		r.Aborted = append(r.Aborted, n)
	}
	if m := serverErr.FindStringSubmatch(r.Stderr); m != nil {
		r.ServerError = m[1]
	}
	r.Debug = DebugLines(r.Stderr)
	return r
}

// DebugLines are the lines debug() printed, in order.
func DebugLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "debug(") {
			out = append(out, l)
		}
	}
	return out
}
