package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// HookResult is what one hook did, as stored with the run.
type HookResult struct {
	Phase    string        `json:"phase"`
	Index    int           `json:"index"` // position in its phase, from 1
	Kind     string        `json:"kind"`  // sql or shell
	Command  string        `json:"command"`
	Server   string        `json:"server,omitempty"` // where SQL ran (redacted)
	ExitCode int           `json:"exit_code"`        // shell: the exit status; -1 killed or did not start
	OK       bool          `json:"ok"`
	Output   string        `json:"output"`
	Error    string        `json:"error,omitempty"`
	Started  time.Time     `json:"started"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// maxOutput bounds the stored output of a hook (its end is kept).
const maxOutput = 64 << 10

// capped keeps the last max bytes written to it.
type capped struct {
	mu        sync.Mutex
	b         bytes.Buffer
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b.Write(p)
	if c.b.Len() > 2*maxOutput {
		keep := append([]byte(nil), c.b.Bytes()[c.b.Len()-maxOutput:]...)
		c.b.Reset()
		c.b.Write(keep)
		c.truncated = true
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.b.String()
	if len(s) > maxOutput {
		s, c.truncated = s[len(s)-maxOutput:], true
	}
	if c.truncated {
		s = "[… earlier output not kept]\n" + s
	}
	return s
}

// RunShell runs a shell command with /bin/sh -c in dir, with env as its whole
// environment (the caller's, as the front end read it, plus fathom's variables), and
// returns its combined output and exit status. A command that outlives
// timeout, or whose ctx ends, is killed with its whole process group.
func RunShell(ctx context.Context, command, dir string, env []string, timeout time.Duration) *HookResult {
	res := &HookResult{Kind: "shell", Command: command, Started: time.Now(), ExitCode: -1}
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = env
	var out capped
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group: a terminal's Ctrl-C reaches fathom, which then stops the
	// hook with everything it started.
	ownGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	res.Elapsed = time.Since(res.Started)
	res.Output = out.String()
	defer func() {
		// Shown and stored: no secret the command holds, or was handed in its
		// environment, survives in what is kept of it.
		known := target.EnvSecrets(env)
		known = append(known, target.SecretsIn(command)...)
		res.Command = target.MaskSecrets(res.Command, known...)
		res.Output = target.MaskSecrets(res.Output, known...)
		res.Error = target.MaskSecrets(res.Error, known...)
	}()
	var ee *exec.ExitError
	switch {
	case err == nil:
		res.ExitCode, res.OK = 0, true
	case ctx.Err() == context.DeadlineExceeded:
		res.Error = fmt.Sprintf("killed after the hook's timeout of %s", timeout)
	case ctx.Err() != nil:
		res.Error = "stopped: " + ctx.Err().Error()
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		res.Error = fmt.Sprintf("exit status %d", res.ExitCode)
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Error = "killed by signal " + ws.Signal().String()
		}
	default:
		res.Error = err.Error()
	}
	return res
}

// RunSQL runs statements one by one on conn and returns the rows they returned as
// text (at most maxRows per statement). It stops at the first error.
func RunSQL(ctx context.Context, conn target.Conn, stmts []string, timeout time.Duration) *HookResult {
	res := &HookResult{Kind: "sql", Command: strings.Join(stmts, ";\n"), Started: time.Now()}
	defer func() {
		known := target.SecretsIn(res.Command)
		res.Command = target.MaskSecrets(res.Command, known...)
		res.Output = target.MaskSecrets(res.Output, known...)
		res.Error = target.MaskSecrets(res.Error, known...)
	}()
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out strings.Builder
	const maxRows = 20
	for _, s := range stmts {
		rows, err := conn.Query(ctx, s)
		if err != nil {
			res.Elapsed = time.Since(res.Started)
			res.Error = target.RedactString(err.Error())
			if ctx.Err() == context.DeadlineExceeded {
				res.Error = fmt.Sprintf("cancelled after the hook's timeout of %s (%s)", timeout, res.Error)
			}
			fmt.Fprintf(&out, "%s\nERROR: %s\n", s, res.Error)
			res.Output = out.String()
			return res
		}
		if len(rows) > 0 {
			fmt.Fprintf(&out, "%s\n", s)
			for i, r := range rows {
				if i == maxRows {
					fmt.Fprintf(&out, "  … %d rows in all\n", len(rows))
					break
				}
				fmt.Fprintf(&out, "  %s\n", strings.Join(r, " | "))
			}
		}
	}
	res.Elapsed = time.Since(res.Started)
	res.OK = true
	res.Output = out.String()
	return res
}

// Failure renders a failed hook for the user: what failed, why, and the end of its
// output.
func (r *HookResult) Failure() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s hook %d (%s", r.Phase, r.Index, r.Kind)
	if r.Server != "" {
		fmt.Fprintf(&b, " on %s", r.Server)
	}
	fmt.Fprintf(&b, ") failed: %s", r.Error)
	if out := strings.TrimSpace(r.Output); out != "" {
		lines := strings.Split(out, "\n")
		if len(lines) > 20 {
			lines = append([]string{"…"}, lines[len(lines)-20:]...)
		}
		b.WriteString("\n  output:\n    " + strings.Join(lines, "\n    "))
	}
	return b.String()
}
