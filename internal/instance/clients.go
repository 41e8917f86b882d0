package instance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fathom-lab/fathom/internal/safefile"
)

// defaultPath is the search path of a hook whose environment has none (as sh's).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// HookEnv is env (the environment a hook starts from, as the front end read it) made
// to reach the instance with the server's own clients: the variables that would point
// them elsewhere are dropped, the instance's are set, and where the host's option
// files beat every variable (MariaDB), dir receives small wrappers of the clients
// that pass the instance's client file first, and goes first on PATH.
//
// dir must be a directory only fathom's user can write (created 0700 when missing):
// a hook runs what it holds. It is the caller's to remove.
func (i *Instance) HookEnv(env []string, dir string) ([]string, error) {
	c := i.Driver().Clients(i)
	drop := map[string]bool{}
	for _, n := range c.Unset {
		drop[n] = true
	}
	for _, kv := range c.Env {
		n, _, _ := strings.Cut(kv, "=")
		drop[n] = true
	}
	out := make([]string, 0, len(env)+len(c.Env)+1)
	path := ""
	for _, kv := range env {
		n, v, _ := strings.Cut(kv, "=")
		if n == "PATH" {
			path = v
			continue
		}
		if !drop[n] {
			out = append(out, kv)
		}
	}
	out = append(out, c.Env...)
	if path == "" {
		path = defaultPath
	}
	if len(c.Wrap) > 0 {
		if err := safefile.Dir(dir, 0o700); err != nil {
			return nil, fmt.Errorf("directory of client wrappers: %v", err)
		}
		progs := make([]string, 0, len(c.Wrap))
		for p := range c.Wrap {
			progs = append(progs, p)
		}
		slices.Sort(progs)
		for _, prog := range progs {
			real := lookPath(prog, path, dir)
			if real == "" {
				continue // not installed: nothing to wrap
			}
			if err := writeWrapper(filepath.Join(dir, prog), i.Name, real, c.Wrap[prog], c.Yield); err != nil {
				return nil, err
			}
		}
		path = dir + string(os.PathListSeparator) + path
	}
	return append(out, "PATH="+path), nil
}

// lookPath finds prog in the directories of path other than skip (the wrappers'), as
// the shell would; relative entries are not trusted.
func lookPath(prog, path, skip string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) || filepath.Clean(d) == filepath.Clean(skip) {
			continue
		}
		if p := filepath.Join(d, prog); Executable(p) {
			return p
		}
	}
	return ""
}

// writeWrapper writes an sh script that runs real with args before its own, unless its
// first argument matches one of yield.
func writeWrapper(path, inst, real string, args, yield []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# Written by fathom: %s reaches instance %s, whatever the host's option files say.\n", filepath.Base(path), inst)
	if len(yield) > 0 {
		fmt.Fprintf(&b, "case \"$1\" in %s) exec %s \"$@\" ;; esac\n", strings.Join(yield, "|"), shellQuote(real))
	}
	b.WriteString("exec " + shellQuote(real))
	for _, a := range args {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString(" \"$@\"\n")
	if err := safefile.WriteFile(path, []byte(b.String())); err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	return os.Chmod(path, 0o700)
}

// ShellWord is s as one word of an sh command line: as it is when it holds nothing sh
// would read otherwise, else quoted.
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,") == "" {
		return s
	}
	return shellQuote(s)
}

// shellQuote quotes s for sh: between single quotes, a quote in s closed, escaped and
// reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
