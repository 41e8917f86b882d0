package pgscript

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// Options configure a run of pgbench scripts (pgbench's -f, -b, -D, -M, -s).
type Options struct {
	Files    []string // -f path[@weight]
	Builtins []string // -b name[@weight] (-S and -N are select-only and simple-update)
	Defines  []string // -D name=value
	Mode     string   // simple, extended or prepared (default prepared)
	Scale    string   // -s: the :scale of custom scripts (built-ins read it from the data)
	// AllowShell lets \shell and \setshell run commands; without it a script that uses
	// them is refused.
	AllowShell bool
	// PerStatement times every command of every script (pgbench's -r).
	PerStatement bool
	// Debug receives debug()'s lines (nil: discarded).
	Debug io.Writer
	// Stdout receives what \shell commands print, as pgbench lets them print on its
	// standard output (nil: discarded).
	Stdout io.Writer
}

// Limits pgbench enforces before running, which fathom enforces the same way.
const (
	maxScripts = 128 // -f and -b scripts together
	maxParams  = 255 // variables in one SQL command sent with -M extended or prepared
)

// scriptWorkload runs a weighted mix of scripts; each script is a transaction type.
type scriptWorkload struct {
	scripts  []*script
	total    int
	vars     *varTable
	defines  []define
	mode     string
	scale    int64
	scaleSet bool
	builtin  bool // a built-in script is used: scale comes from pgbench_branches
	joined   bool // joinCompounds ran
	nStmts   int  // SQL statements over all scripts (ids)
	maxArgs  int
	allow    bool
	debug    io.Writer
	stdout   io.Writer
	dialect  target.Dialect // the target's, known after Setup (zero: none)
	opts     map[string]string
	timed    bool  // -r
	nCmds    int   // commands over all scripts
	maxCmds  int   // commands of the longest script
	base     []int // by script: the index of its first command among all

	// Fixed at Setup.
	slots struct{ clientID, scale, randomSeed, defaultSeed int }
}

type define struct {
	slot int
	text string
}

var _ workload.Workload = (*scriptWorkload)(nil)

// Open reads and parses the scripts. Every mistake is one line naming the file and
// line, or the option.
func Open(o Options) (*scriptWorkload, error) {
	w := &scriptWorkload{vars: newVarTable(), mode: o.Mode, allow: o.AllowShell, debug: o.Debug, stdout: o.Stdout, opts: map[string]string{}, timed: o.PerStatement}
	switch w.mode {
	case "":
		w.mode = "prepared"
	case "simple", "extended", "prepared":
	default:
		return nil, fmt.Errorf("-M %s: use simple, extended or prepared", o.Mode)
	}
	// Automatic variables first, so that their slots are known.
	w.slots.clientID = w.vars.slot("client_id")
	w.slots.scale = w.vars.slot("scale")
	w.slots.randomSeed = w.vars.slot("random_seed")
	w.slots.defaultSeed = w.vars.slot("default_seed")
	if err := w.addBuiltins(o.Builtins); err != nil {
		return nil, err
	}
	if err := w.addFiles(o.Files); err != nil {
		return nil, err
	}
	if n := len(w.scripts); n > maxScripts {
		return nil, fmt.Errorf("%d scripts: pgbench runs at most %d (-f and -b together)", n, maxScripts)
	}
	if len(w.scripts) == 0 {
		return nil, fmt.Errorf("no script to run: give -f FILE, -b tpcb-like|simple-update|select-only, -S or -N")
	}
	if w.total <= 0 {
		return nil, fmt.Errorf("the scripts' weights add up to 0: give at least one a positive weight (-f FILE@1)")
	}
	if err := w.addDefines(o.Defines); err != nil {
		return nil, err
	}
	if err := w.setScale(o.Scale); err != nil {
		return nil, err
	}
	for _, s := range w.scripts {
		if err := w.checkScript(s); err != nil {
			return nil, err
		}
	}
	w.opts["mode"] = w.mode
	return w, nil
}

// addBuiltins adds the -b scripts (name@weight).
func (w *scriptWorkload) addBuiltins(builtins []string) error {
	for _, b := range builtins {
		name, weight, err := splitWeight(b, "-b")
		if err != nil {
			return err
		}
		full, src, err := builtinSource(name)
		if err != nil {
			return err
		}
		if err := w.add(full, src, weight, "builtin:"+full); err != nil {
			return err
		}
		w.builtin = true
	}
	return nil
}

// addFiles reads and adds the -f scripts (path@weight).
func (w *scriptWorkload) addFiles(files []string) error {
	for _, f := range files {
		path, weight, err := splitWeight(f, "-f")
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("-f %s: cannot read the script: %v", path, err)
		}
		if err := w.add(filepath.Base(path), string(data), weight, path); err != nil {
			return err
		}
	}
	return nil
}

// addDefines sets the -D name=value variables.
func (w *scriptWorkload) addDefines(defines []string) error {
	for _, d := range defines {
		name, val, ok := strings.Cut(d, "=")
		if !ok || !legalName(name) || val == "" {
			return fmt.Errorf("-D %q: use -D name=value (a value that is not empty; a name of letters, digits and underscores, not starting with a digit)", d)
		}
		w.defines = append(w.defines, define{slot: w.vars.slot(name), text: val})
		w.opts["define."+name] = val
	}
	return nil
}

// setScale sets :scale from --scale, 1 when it is not given.
func (w *scriptWorkload) setScale(scale string) error {
	if scale == "" {
		w.scale = 1
		return nil
	}
	s, err := strconv.ParseInt(scale, 10, 64)
	if err != nil || s < 1 {
		return fmt.Errorf("--scale %q: use a whole number of at least 1", scale)
	}
	w.scale, w.scaleSet = s, true
	return nil
}

// checkScript refuses a script the options do not let run: too many parameters
// for one command in extended or prepared mode, \shell without --allow-shell, a
// pipeline in simple mode.
func (w *scriptWorkload) checkScript(s *script) error {
	if w.mode != "simple" {
		for i := range s.commands {
			c := &s.commands[i]
			n := 0
			for _, p := range c.parts {
				n += len(p.params)
			}
			if n > maxParams {
				return fmt.Errorf("%s line %d: %d variables in one SQL command; pgbench sends at most %d as parameters with -M %s (-M simple has no limit)", s.Name, c.line, n, maxParams, w.mode)
			}
		}
	}
	if s.shell && !w.allow {
		return fmt.Errorf("%s uses \\shell or \\setshell, which run commands on this machine: allow them with --allow-shell", s.Name)
	}
	if s.pipeline && w.mode == "simple" {
		return fmt.Errorf("%s uses \\startpipeline, which needs -M extended or -M prepared (as in pgbench)", s.Name)
	}
	return nil
}

// splitWeight splits "name@weight" (weight default 1).
func splitWeight(s, flag string) (string, int, error) {
	i := strings.LastIndexByte(s, '@')
	if i < 0 {
		return s, 1, nil
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return "", 0, fmt.Errorf("%s %s: the weight after @ must be a whole number of at least 0", flag, s)
	}
	return s[:i], n, nil
}

func (w *scriptWorkload) add(name, src string, weight int, origin string) error {
	cmds, err := parseScript(origin, src, w.vars)
	if err != nil {
		return err
	}
	if len(cmds) == 0 {
		return fmt.Errorf("%s: the script has no commands", origin)
	}
	s := &script{Name: name, Weight: weight, Source: src, commands: cmds}
	w.base = append(w.base, w.nCmds)
	w.nCmds += len(cmds)
	w.maxCmds = max(w.maxCmds, len(cmds))
	for i := range cmds {
		c := &cmds[i]
		switch c.kind {
		case cShell, cSetShell:
			s.shell = true
		case cStartPipeline:
			s.pipeline = true
		case cSQL:
			n := 0
			for k := range c.parts {
				c.parts[k].id = w.nStmts
				w.nStmts++
				n += len(c.parts[k].params)
			}
			w.maxArgs = max(w.maxArgs, n) // a compound command may be sent as one
		}
	}
	// Names are unique: a second use of a file gets "#2".
	base, n := s.Name, 1
	for w.hasScript(s.Name) {
		n++
		s.Name = base + "#" + strconv.Itoa(n)
	}
	w.scripts = append(w.scripts, s)
	w.total += weight
	k := strconv.Itoa(len(w.scripts))
	sum := sha256.Sum256([]byte(src))
	w.opts["script."+k] = origin + "@" + strconv.Itoa(weight)
	w.opts["script."+k+".sha256"] = hex.EncodeToString(sum[:8])
	return nil
}

func (w *scriptWorkload) hasScript(name string) bool {
	for _, s := range w.scripts {
		if s.Name == name {
			return true
		}
	}
	return false
}

// Name is "pgbench:" and the scripts, e.g. pgbench:tpcb-like or pgbench:a.sql+b.sql.
func (w *scriptWorkload) Name() string {
	names := make([]string, len(w.scripts))
	for i, s := range w.scripts {
		names[i] = s.Name
	}
	return "pgbench:" + strings.Join(names, "+")
}

// Options returns the scripts (origin, weight, digest), mode, scale and defines.
func (w *scriptWorkload) Options() map[string]string {
	out := make(map[string]string, len(w.opts)+1)
	for k, v := range w.opts {
		out[k] = v
	}
	out["scale"] = strconv.FormatInt(w.scale, 10)
	return out
}

// TxnTypes are the scripts' names.
func (w *scriptWorkload) TxnTypes() []string {
	out := make([]string, len(w.scripts))
	for i, s := range w.scripts {
		out[i] = s.Name
	}
	return out
}

// Prepare: scripts bring no data of their own.
func (w *scriptWorkload) Prepare(ctx context.Context, t target.Target, p workload.Progress) error {
	return errors.New("pgbench scripts bring no data: create their tables yourself, or for the built-in scripts run `fathom prepare --workload tpcb --scale N`")
}

// Cleanup drops nothing: the tables are not the scripts'.
func (w *scriptWorkload) Cleanup(ctx context.Context, conn target.Conn) error { return nil }

// Setup learns the target's kind and, when a built-in script runs, reads the scale
// from pgbench_branches as pgbench does.
func (w *scriptWorkload) Setup(ctx context.Context, conn target.Conn) error {
	if d, ok := conn.(interface{ Dialect() target.Dialect }); ok {
		w.dialect = d.Dialect()
	}
	if !w.dialect.Pipeline {
		for _, s := range w.scripts {
			if s.pipeline {
				return fmt.Errorf("%s uses \\startpipeline, which runs on PostgreSQL only", s.Name)
			}
		}
	}
	if w.dialect.Name == "postgres" && !w.joined {
		w.joinCompounds()
	}
	if !w.builtin {
		return nil
	}
	rows, err := conn.Query(ctx, "SELECT count(*) FROM pgbench_branches")
	if err != nil || len(rows) != 1 {
		_ = conn.Rollback(ctx)
		return fmt.Errorf("the built-in scripts need the pgbench tables: %w", workload.ErrNotPrepared)
	}
	n, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil || n < 1 {
		return fmt.Errorf("pgbench_branches is empty: %w", workload.ErrNotPrepared)
	}
	w.scale = n
	return nil
}

// Commands names every command of every script, in script order, by the index the
// workers record their times under (with -r; nil without).
func (w *scriptWorkload) Commands() []measure.StatementLatency {
	if !w.timed {
		return nil
	}
	out := make([]measure.StatementLatency, 0, w.nCmds)
	for _, s := range w.scripts {
		for ci := range s.commands {
			c := &s.commands[ci]
			out = append(out, measure.StatementLatency{Txn: s.Name, Line: c.line, Text: c.text})
		}
	}
	return out
}

// joinCompounds makes each \; compound command one statement, as pgbench sends it to
// PostgreSQL: one simple query (its statements one implicit transaction) with -M
// simple, which the server refuses with -M extended and prepared ("cannot insert
// multiple commands into a prepared statement") so that the client aborts as in
// pgbench. With -M simple and \gset or \aset the statements stay apart, since each
// one's result is needed.
func (w *scriptWorkload) joinCompounds() {
	w.joined = true
	for _, s := range w.scripts {
		for i := range s.commands {
			c := &s.commands[i]
			if c.kind != cSQL || len(c.parts) < 2 || (w.mode == "simple" && (c.gset || c.aset)) {
				continue
			}
			j := sqlPart{id: c.parts[0].id}
			var text, bound []string
			for k, p := range c.parts {
				if k > 0 {
					j.segs = append(j.segs, segment{lit: ";\n", slot: -1})
				}
				text, bound = append(text, p.text), append(bound, p.bound)
				j.segs = append(j.segs, p.segs...)
				j.params = append(j.params, p.params...)
			}
			j.text, j.bound = strings.Join(text, ";\n"), strings.Join(bound, ";\n")
			c.parts = []sqlPart{j}
		}
	}
}
