package pgscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// cmdKind is what a script command does.
type cmdKind uint8

const (
	cSQL cmdKind = iota
	cSet
	cSleep
	cIf
	cElif
	cElse
	cEndif
	cShell
	cSetShell
	cStartPipeline
	cEndPipeline
	cSyncPipeline
)

// txnCtl marks SQL that only starts or ends a transaction: on targets other than
// PostgreSQL it goes through the connection's Begin, Commit and Rollback, so that
// pgbench's BEGIN … END runs on MySQL and SQLite too.
type txnCtl uint8

const (
	txNone txnCtl = iota
	txBegin
	txCommit
	txRollback
)

// segment is a piece of SQL text: literal text, or a variable's slot (slot >= 0).
type segment struct {
	lit  string
	slot int
}

// sqlPart is one statement of an SQL command (a command joined with \; has several).
type sqlPart struct {
	text   string    // as written, for messages and -r
	segs   []segment // text and variables, for -M simple
	bound  string    // with '?' placeholders, for -M extended and prepared
	params []int     // variable slots of the placeholders, in order
	txn    txnCtl
	id     int // index of the statement over all scripts
}

// command is one parsed script command.
type command struct {
	kind cmdKind
	line int
	text string // the command as written (first line), for messages and -r

	parts  []sqlPart // cSQL
	gset   bool      // \gset: store the last statement's one row
	aset   bool      // \aset: store every statement's row when it has exactly one
	prefix string

	slot    int    // cSet, cSetShell: the variable (-1: badName)
	badName string // cSet, cSetShell: a name pgbench refuses when the command runs
	expr    *node  // cSet, cIf, cElif

	sleepN    int64 // cSleep: a constant amount, or
	sleepSlot int   // a variable's slot (-1: constant)
	sleepUnit int64 // nanoseconds per unit

	shell []shellArg // cShell, cSetShell

	jump int // cIf, cElif: the next branch (\elif, \else or \endif) when false
	end  int // cIf, cElif, cElse: the \endif; cStartPipeline: the \endpipeline
}

// setName sets the variable a \set or \setshell assigns. As in pgbench, a name that
// is not a variable name fails the command when it runs, not when it is read.
func (c *command) setName(vars *varTable, name string) {
	if !legalName(name) {
		c.slot, c.badName = -1, name
		return
	}
	c.slot = vars.slot(name)
}

// shellArg is a word of a shell command: text, or a variable (slot >= 0).
type shellArg struct {
	lit  string
	slot int
}

// script is one parsed pgbench script.
type script struct {
	Name     string // file name or built-in name, as results show it
	Weight   int
	Source   string
	commands []command
	pipeline bool // uses \startpipeline
	shell    bool // uses \shell or \setshell
}

// parseError is a mistake in a script, with its place.
type parseError struct {
	File string
	Line int
	Msg  string
}

func (e *parseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// scanner walks a script's text.
type scanner struct {
	src     string
	i       int
	line    int
	file    string
	vars    *varTable
	out     []command
	sql     strings.Builder // the SQL command being read
	sqlLine int
	parts   []string // finished \; parts of the SQL command being read
}

// parseScript parses a script's text; variable names go into vars.
func parseScript(file, src string, vars *varTable) ([]command, error) {
	s := &scanner{src: src, line: 1, file: file, vars: vars}
	if err := s.run(); err != nil {
		return nil, err
	}
	if err := link(file, s.out); err != nil {
		return nil, err
	}
	return s.out, nil
}

func (s *scanner) errf(line int, format string, args ...any) error {
	return &parseError{File: s.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) run() error {
	depth := 0
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '\n':
			s.line++
			s.add(c)
		case c == '-' && s.peek(1) == '-':
			j := strings.IndexByte(s.src[s.i:], '\n')
			if j < 0 {
				j = len(s.src) - s.i
			}
			if strings.TrimSpace(s.sql.String()) != "" {
				s.sql.WriteString(s.src[s.i : s.i+j])
			}
			s.i += j
			continue
		case c == '/' && s.peek(1) == '*':
			start := s.line
			j, err := s.blockComment()
			if err != nil {
				return s.errf(start, "%v", err)
			}
			s.mark()
			s.sql.WriteString(s.src[s.i:j])
			s.i = j
			continue
		case c == '\'' || c == '"':
			start := s.line
			j := s.quoted(c)
			if j < 0 {
				return s.errf(start, "unterminated quoted string")
			}
			s.mark()
			s.sql.WriteString(s.src[s.i:j])
			s.i = j
			continue
		case c == '$' && s.dollarTag() != "":
			tag := s.dollarTag()
			start := s.line
			end := strings.Index(s.src[s.i+len(tag):], tag)
			if end < 0 {
				return s.errf(start, "unterminated dollar-quoted string %s", tag)
			}
			j := s.i + len(tag) + end + len(tag)
			s.mark()
			s.line += strings.Count(s.src[s.i:j], "\n")
			s.sql.WriteString(s.src[s.i:j])
			s.i = j
			continue
		case c == '(':
			depth++
			s.add(c)
		case c == ')':
			if depth > 0 {
				depth--
			}
			s.add(c)
		case c == ';' && depth == 0:
			s.i++
			if err := s.endSQL(); err != nil {
				return err
			}
			continue
		case c == '\\' && s.peek(1) == ';':
			// \; joins statements into one compound command.
			s.parts = append(s.parts, s.sql.String())
			s.sql.Reset()
			s.i += 2
			continue
		case c == '\\':
			if err := s.meta(); err != nil {
				return err
			}
			depth = 0
			continue
		default:
			s.add(c)
		}
		s.i++
	}
	return s.endSQL()
}

func (s *scanner) peek(k int) byte {
	if s.i+k < len(s.src) {
		return s.src[s.i+k]
	}
	return 0
}

// mark notes the line where the current SQL command starts.
func (s *scanner) mark() {
	if strings.TrimSpace(s.sql.String()) == "" && len(s.parts) == 0 {
		s.sqlLine = s.line
	}
}

func (s *scanner) add(c byte) {
	if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
		s.mark()
	}
	s.sql.WriteByte(c)
}

// quoted returns the end of the quoted string or identifier at s.i (-1 if none).
// E'…' strings take backslash escapes; ” and "" are doubled quotes.
func (s *scanner) quoted(q byte) int {
	esc := q == '\'' && s.i > 0 && (s.src[s.i-1] == 'E' || s.src[s.i-1] == 'e') &&
		(s.i < 2 || !isVarChar(s.src[s.i-2]))
	for j := s.i + 1; j < len(s.src); j++ {
		switch c := s.src[j]; {
		case c == '\n':
			s.line++
		case c == '\\' && esc:
			j++
		case c == q:
			if j+1 < len(s.src) && s.src[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return -1
}

// dollarTag returns the $tag$ opening a dollar-quoted string at s.i, or "".
func (s *scanner) dollarTag() string {
	if s.i > 0 && isVarChar(s.src[s.i-1]) {
		return "" // $1 or part of an identifier
	}
	j := s.i + 1
	for j < len(s.src) && (isIdentStart(s.src[j]) || (j > s.i+1 && isDigit(s.src[j]))) {
		j++
	}
	if j < len(s.src) && s.src[j] == '$' {
		return s.src[s.i : j+1]
	}
	return ""
}

// blockComment returns the end of the (nested) comment at s.i.
func (s *scanner) blockComment() (int, error) {
	depth := 0
	for j := s.i; j < len(s.src); j++ {
		switch {
		case s.src[j] == '\n':
			s.line++
		case s.src[j] == '/' && j+1 < len(s.src) && s.src[j+1] == '*':
			depth++
			j++
		case s.src[j] == '*' && j+1 < len(s.src) && s.src[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("unterminated /* comment")
}

// endSQL turns the SQL read so far into a command, if there is any.
func (s *scanner) endSQL() error {
	parts := append(s.parts, s.sql.String())
	s.parts = nil
	s.sql.Reset()
	cmd := command{kind: cSQL, line: s.sqlLine}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		cmd.parts = append(cmd.parts, s.compileSQL(p))
	}
	if len(cmd.parts) == 0 {
		return nil
	}
	cmd.text = firstLine(cmd.parts[0].text)
	s.out = append(s.out, cmd)
	return nil
}

func firstLine(t string) string {
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		return strings.TrimSpace(t[:i]) + " …"
	}
	return t
}

// compileSQL finds the :variables of one statement and makes its text for each query
// mode. As in pgbench, a variable is recognised anywhere in the text, inside quotes
// and comments too; a run of two or more colons (a '::' cast) is not one.
func (s *scanner) compileSQL(text string) sqlPart {
	p := sqlPart{text: text, txn: txnOf(text)}
	var lit, bound strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == ':' && i+1 < len(text) && text[i+1] == ':':
			j := i
			for j < len(text) && text[j] == ':' {
				j++
			}
			lit.WriteString(text[i:j])
			bound.WriteString(text[i:j])
			i = j - 1
			continue
		case c == ':' && i+1 < len(text) && isIdentStart(text[i+1]):
			j := i + 1
			for j < len(text) && isVarChar(text[j]) {
				j++
			}
			slot := s.vars.slot(text[i+1 : j])
			if lit.Len() > 0 {
				p.segs = append(p.segs, segment{lit: lit.String(), slot: -1})
				lit.Reset()
			}
			p.segs = append(p.segs, segment{lit: text[i:j], slot: slot})
			p.params = append(p.params, slot)
			bound.WriteByte('?')
			i = j - 1
			continue
		}
		lit.WriteByte(c)
		bound.WriteByte(c)
	}
	if lit.Len() > 0 {
		p.segs = append(p.segs, segment{lit: lit.String(), slot: -1})
	}
	p.bound = bound.String()
	return p
}

// txnOf recognises a statement that is only BEGIN, START TRANSACTION, COMMIT, END or
// ROLLBACK (with an optional WORK or TRANSACTION).
func txnOf(text string) txnCtl {
	f := strings.Fields(strings.ToLower(strings.TrimRight(text, "; \t\r\n")))
	if len(f) == 0 || len(f) > 2 {
		return txNone
	}
	if len(f) == 2 && f[1] != "work" && f[1] != "transaction" {
		return txNone
	}
	switch f[0] {
	case "begin":
		return txBegin
	case "start":
		if len(f) == 2 && f[1] == "transaction" {
			return txBegin
		}
	case "commit", "end":
		return txCommit
	case "rollback", "abort":
		return txRollback
	}
	return txNone
}

// meta reads a meta-command at s.i (a backslash) to the end of its line; a backslash
// at the end of a line continues it.
func (s *scanner) meta() error {
	line := s.line
	body := s.metaLine()
	word, rest, _ := strings.Cut(body, " ")
	if k := strings.IndexAny(word, "\t"); k >= 0 {
		word, rest = word[:k], word[k+1:]+" "+rest
	}
	name := strings.ToLower(word)
	rest = strings.TrimSpace(rest)

	if name == "gset" || name == "aset" {
		return s.resultInto(line, name, rest)
	}
	if err := s.endSQL(); err != nil {
		return err
	}
	cmd := command{line: line, text: "\\" + body, sleepSlot: -1}
	args := strings.Fields(rest)
	var err error
	switch name {
	case "set":
		err = s.set(&cmd, rest, args)
	case "if", "elif":
		e, perr := parseExpr(rest, s.vars)
		if perr != nil {
			return s.errf(line, "\\%s: %v", name, perr)
		}
		cmd.kind, cmd.expr = cIf, e
		if name == "elif" {
			cmd.kind = cElif
		}
	case "else", "endif":
		if len(args) > 0 {
			return s.errf(line, "\\%s takes no arguments", name)
		}
		cmd.kind = cElse
		if name == "endif" {
			cmd.kind = cEndif
		}
	case "sleep":
		err = s.sleep(&cmd, args)
	case "shell", "setshell":
		err = s.shell(&cmd, name, args)
	case "startpipeline", "endpipeline", "syncpipeline":
		if len(args) > 0 {
			return s.errf(line, "\\%s takes no arguments", name)
		}
		cmd.kind = map[string]cmdKind{"startpipeline": cStartPipeline, "endpipeline": cEndPipeline, "syncpipeline": cSyncPipeline}[name]
	case "":
		return s.errf(line, "a lone backslash: a meta-command name must follow it (\\set, \\sleep, \\if …)")
	default:
		return s.errf(line, "invalid command \\%s (pgbench meta-commands: \\set \\sleep \\if \\elif \\else \\endif \\gset \\aset \\shell \\setshell \\startpipeline \\syncpipeline \\endpipeline)", word)
	}
	if err != nil {
		return err
	}
	s.out = append(s.out, cmd)
	return nil
}

// metaLine reads the meta-command at s.i to the end of its line, joining lines
// that end with a backslash (\n or \r\n) with a space, and returns it without the
// leading backslash and trailing white space. It leaves s.i at the line's end.
func (s *scanner) metaLine() string {
	var b strings.Builder
	j := s.i + 1
	for j < len(s.src) && s.src[j] != '\n' {
		if s.src[j] == '\\' && j+1 < len(s.src) && s.src[j+1] == '\n' {
			b.WriteByte(' ')
			j += 2
			s.line++
			continue
		}
		if s.src[j] == '\\' && j+2 < len(s.src) && s.src[j+1] == '\r' && s.src[j+2] == '\n' {
			b.WriteByte(' ')
			j += 3
			s.line++
			continue
		}
		b.WriteByte(s.src[j])
		j++
	}
	s.i = j
	return strings.TrimRight(b.String(), " \t\r")
}

// resultInto reads \gset or \aset (name), which end the SQL command before them and
// store its result in variables (with an optional name prefix).
func (s *scanner) resultInto(line int, name, rest string) error {
	pending := strings.TrimSpace(s.sql.String()) != "" || len(s.parts) > 0
	if pending {
		if err := s.endSQL(); err != nil {
			return err
		}
	}
	if len(s.out) == 0 || s.out[len(s.out)-1].kind != cSQL || s.out[len(s.out)-1].gset || s.out[len(s.out)-1].aset {
		return s.errf(line, "\\%s must follow an SQL command", name)
	}
	args := strings.Fields(rest)
	if len(args) > 1 {
		return s.errf(line, "\\%s takes at most one argument (a variable name prefix)", name)
	}
	last := &s.out[len(s.out)-1]
	last.gset, last.aset = name == "gset", name == "aset"
	if len(args) == 1 {
		last.prefix = args[0]
	}
	return nil
}

// set reads \set name expression.
func (s *scanner) set(cmd *command, rest string, args []string) error {
	if len(args) < 2 {
		return s.errf(cmd.line, "\\set needs a variable name and an expression: \\set name expression")
	}
	exprText := strings.TrimSpace(strings.TrimPrefix(rest, args[0]))
	e, err := parseExpr(exprText, s.vars)
	if err != nil {
		return s.errf(cmd.line, "\\set %s: %v", args[0], err)
	}
	cmd.kind, cmd.expr = cSet, e
	cmd.setName(s.vars, args[0])
	return nil
}

// shell reads \shell command… or \setshell name command… (name is which).
func (s *scanner) shell(cmd *command, name string, args []string) error {
	min := 1
	cmd.kind = cShell
	if name == "setshell" {
		min = 2
		cmd.kind = cSetShell
	}
	if len(args) < min {
		if name == "setshell" {
			return s.errf(cmd.line, "\\setshell needs a variable name and a command")
		}
		return s.errf(cmd.line, "\\shell needs a command")
	}
	if name == "setshell" {
		cmd.setName(s.vars, args[0])
		args = args[1:]
	}
	// As pgbench: a word starting with ':' is a variable (the rest of the word
	// is its name), '::' starts a literal with one colon.
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "::"):
			cmd.shell = append(cmd.shell, shellArg{lit: a[1:], slot: -1})
		case len(a) > 1 && a[0] == ':':
			cmd.shell = append(cmd.shell, shellArg{slot: s.vars.slot(a[1:])})
		default:
			cmd.shell = append(cmd.shell, shellArg{lit: a, slot: -1})
		}
	}
	return nil
}

// sleep reads \sleep's arguments as pgbench does: a whole number (as C's atoi reads
// it, so a value beyond an int wraps), with its unit attached (2ms) or as a second
// argument; or a :variable, whose value is read the same way when the command runs.
func (s *scanner) sleep(cmd *command, args []string) error {
	cmd.kind = cSleep
	if len(args) == 0 {
		return s.errf(cmd.line, "\\sleep needs a duration: \\sleep number [us|ms|s] or \\sleep :variable [us|ms|s]")
	}
	if len(args) > 2 {
		return s.errf(cmd.line, "\\sleep: too many arguments (\\sleep number [us|ms|s])")
	}
	unit := "s"
	if len(args) == 2 {
		unit = args[1]
	}
	a := args[0]
	if a[0] == ':' {
		cmd.sleepSlot = s.vars.slot(a[1:])
	} else {
		n, rest, ok := atoiPrefix(a)
		if !ok || (rest != "" && len(args) == 2) {
			return s.errf(cmd.line, "\\sleep: invalid sleep time %q: must be an integer", a)
		}
		if rest != "" {
			unit = rest
		}
		cmd.sleepN = n
	}
	switch strings.ToLower(unit) {
	case "us":
		cmd.sleepUnit = 1e3
	case "ms":
		cmd.sleepUnit = 1e6
	case "s":
		cmd.sleepUnit = 1e9
	default:
		return s.errf(cmd.line, "\\sleep: unknown time unit %q (us, ms or s)", unit)
	}
	return nil
}

// atoiPrefix reads a whole number at the start of a as C's atoi does: spaces, a sign,
// at least one digit (ok false without), saturated to 64 bits then cut to a C int.
// rest is what follows the digits.
func atoiPrefix(a string) (n int64, rest string, ok bool) {
	i := len(a) - len(strings.TrimLeft(a, cSpace))
	j := i
	if j < len(a) && (a[j] == '+' || a[j] == '-') {
		j++
	}
	k := j
	for k < len(a) && isDigit(a[k]) {
		k++
	}
	if k == j {
		return 0, a, false
	}
	v, err := strconv.ParseInt(a[i:k], 10, 64)
	if err != nil { // out of range: strtol saturates
		v = math.MaxInt64
		if a[i] == '-' {
			v = math.MinInt64
		}
	}
	return int64(int32(v)), a[k:], true
}

// legalName: pgbench's variable names are letters (any non-ASCII byte counts as
// one), digits and underscores, not starting with a digit.
func legalName(n string) bool {
	if n == "" || isDigit(n[0]) {
		return false
	}
	for i := 0; i < len(n); i++ {
		if !isVarChar(n[i]) {
			return false
		}
	}
	return true
}

// link checks \if nesting and pipelines and sets the jumps: a false \if or \elif goes
// to its next branch; the end of a taken branch (\elif or \else reached) goes to the
// \endif.
func link(file string, cmds []command) error {
	type frame struct {
		start    int
		branches []int // \if, \elif…, \else indexes
		sawElse  bool
	}
	var stack []frame
	pipe := -1
	for i := range cmds {
		c := &cmds[i]
		switch c.kind {
		case cIf:
			stack = append(stack, frame{start: i, branches: []int{i}})
		case cElif, cElse:
			if len(stack) == 0 {
				return &parseError{file, c.line, fmt.Sprintf("%s without a matching \\if", firstWord(c.text))}
			}
			f := &stack[len(stack)-1]
			if f.sawElse {
				return &parseError{file, c.line, fmt.Sprintf("%s after \\else", firstWord(c.text))}
			}
			cmds[f.branches[len(f.branches)-1]].jump = i
			f.branches = append(f.branches, i)
			f.sawElse = c.kind == cElse
		case cEndif:
			if len(stack) == 0 {
				return &parseError{file, c.line, "\\endif without a matching \\if"}
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			last := f.branches[len(f.branches)-1]
			if cmds[last].kind != cElse {
				cmds[last].jump = i
			}
			for _, b := range f.branches {
				cmds[b].end = i
			}
		case cStartPipeline:
			if pipe >= 0 {
				return &parseError{file, c.line, "\\startpipeline inside a pipeline (already started on line " + strconv.Itoa(cmds[pipe].line) + ")"}
			}
			pipe = i
		case cEndPipeline, cSyncPipeline:
			if pipe < 0 {
				return &parseError{file, c.line, firstWord(c.text) + " without \\startpipeline"}
			}
			if c.kind == cEndPipeline {
				cmds[pipe].end = i
				pipe = -1
			}
		case cSQL:
			// As documented for pgbench: the results are not there yet when the
			// variables would need them.
			if pipe >= 0 && (c.gset || c.aset) {
				w := "\\gset"
				if c.aset {
					w = "\\aset"
				}
				return &parseError{file, c.line, w + " cannot be used inside a pipeline (started on line " + strconv.Itoa(cmds[pipe].line) + "): the results arrive only at \\endpipeline"}
			}
		}
	}
	if len(stack) > 0 {
		return &parseError{file, cmds[stack[len(stack)-1].start].line, "\\if without a matching \\endif"}
	}
	if pipe >= 0 {
		return &parseError{file, cmds[pipe].line, "\\startpipeline without \\endpipeline"}
	}
	return nil
}

func firstWord(t string) string {
	w, _, _ := strings.Cut(t, " ")
	return w
}
