package pgscript

import (
	"bytes"
	"context"
	"math"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// shell runs \shell and \setshell commands (only when the workload allows them; Open
// refuses a script that uses them otherwise). As pgbench does, the words are joined
// with spaces and given to the system's shell; :variables are substituted first.
func (k *worker) shell(ctx context.Context, s *script, c *command) error {
	words := make([]string, len(c.shell))
	for i, a := range c.shell {
		if a.slot < 0 {
			words[i] = a.lit
			continue
		}
		v := &k.st.vars[a.slot]
		if !v.set {
			return k.abort(s, c, evalErrf("undefined variable %q", k.st.names[a.slot]))
		}
		words[i] = string(v.appendSQL(nil))
	}
	line := strings.Join(words, " ")
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/C", line)
	} else {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", line)
	}
	var out bytes.Buffer
	if c.kind == cSetShell {
		cmd.Stdout = &out
	} else if k.w.stdout != nil {
		cmd.Stdout = k.w.stdout // as pgbench, \shell's output goes to the standard output
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return k.abort(s, c, evalErrf("shell command failed: %v", err))
	}
	if c.kind == cSetShell {
		i, ok := shellInt(out.String())
		if !ok {
			return k.abort(s, c, evalErrf("\\setshell: the command must print an integer, it printed %q", out.String()))
		}
		if c.slot < 0 {
			return k.abort(s, c, evalErrf("invalid variable name %q", c.badName))
		}
		k.st.vars[c.slot].setValue(intVal(i))
	}
	return nil
}

// shellInt reads \setshell's output as pgbench does (C's strtol): spaces, a sign and
// digits, then nothing but spaces; no digits at all reads as 0.
func shellInt(out string) (int64, bool) {
	t := strings.Trim(out, cSpace)
	if t == "" {
		return 0, true
	}
	if !intLike(t) {
		return 0, false
	}
	i, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		if t == "+" || t == "-" {
			return 0, true
		}
		i = math.MaxInt64 // strtol saturates
		if t[0] == '-' {
			i = math.MinInt64
		}
	}
	return i, true
}
