package sblua

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fathom-lab/fathom/internal/lua"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// version is the sysbench whose script API this package provides.
const version = "1.0.20"

// env is one Lua state and what its sysbench API works on: a sysbench thread.
type env struct {
	L      *lua.LState
	s      *script
	tid    int
	ctx    context.Context
	tgt    target.Target
	driver string
	out    io.Writer
	rng    *rng

	primary     target.Conn // the runner's connection for this client (nil for commands)
	primaryUsed bool
	primaryConn *sqlConn
	own         []*sqlConn

	stmts    int  // statements sent since the count was last reset
	eventErr bool // the event running counted an error (ffi.C.sb_counter_inc)
	// byClass counts the statements sent by sysbench's classes (other, read, write),
	// for the scripts' report hooks; read by the reporting state's goroutine.
	byClass   [3]atomic.Int64
	rep       *reporter  // the workload's, in the state its report hooks run in
	lastErr   error      // the last SQL error raised in the script
	lastWhere string     // where it was raised ("file:line: ")
	lastVal   lua.LValue // the Lua value raised for it

	connMT, stmtMT, paramMT, resMT, resMethods *lua.LTable

	step stepper // event() as a coroutine on the runner's multiplexed path (step.go)
}

// envConfig is what a new state needs.
type envConfig struct {
	s       *script
	tid     int
	command string
	opts    map[string]string // every option's value, sysbench's and the script's
	kinds   map[string]optKind
	driver  string
	tgt     target.Target
	out     io.Writer
	rp      randParams
	seed    uint64
	uniq    *uniqueSeq
}

// newEnv makes a Lua state with sysbench's API and runs the script's main chunk in
// it, as sysbench does for each of its threads.
func newEnv(ctx context.Context, c envConfig) (*env, error) {
	L := lua.NewState(lua.Options{CallStackSize: 256, RegistrySize: 1024 * 4})
	e := &env{L: L, s: c.s, tid: c.tid, ctx: ctx, tgt: c.tgt, driver: c.driver, out: c.out}
	if e.out == nil {
		e.out = io.Discard
	}
	if e.uniqNil(c) {
		c.uniq = newUniqueSeq(c.seed)
	}
	e.rng = newRNG(gen.New(c.seed, uint64(c.tid)), c.rp, c.uniq)
	e.setPath()
	e.setLoader()
	sb := L.NewTable()
	L.SetField(sb, "tid", lua.LNumber(c.tid))
	L.SetField(sb, "version", lua.LString(version))
	L.SetField(sb, "version_string", lua.LString("sysbench "+version+" (fathom)"))
	errT := L.NewTable()
	L.SetField(errT, "NONE", lua.LNumber(0))
	L.SetField(errT, "RESTART_EVENT", lua.LNumber(restartEvent))
	L.SetField(sb, "error", errT)
	cmd := L.NewTable()
	argv := L.NewTable()
	argv.RawSetInt(0, lua.LString("sysbench"))
	L.SetField(cmd, "argv", argv)
	if c.command != "" {
		L.SetField(cmd, "command", lua.LString(c.command))
	}
	L.SetField(cmd, "script_path", lua.LString(c.s.Path))
	L.SetField(cmd, "PARALLEL_COMMAND", lua.LTrue)
	for i, n := range []string{"NULL", "BOOL", "INT", "SIZE", "DOUBLE", "STRING", "LIST", "FILE", "MAX"} {
		L.SetField(cmd, "ARG_"+n, lua.LNumber(i))
	}
	L.SetField(cmd, "command_defined", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LBool(e.command(L.CheckString(1)) != nil))
		return 1
	}))
	L.SetField(sb, "cmdline", cmd)
	L.SetField(sb, "hooks", L.NewTable())
	opt := L.NewTable()
	for k, v := range c.opts {
		L.SetField(opt, k, optValue(L, c.kinds[k], v))
	}
	L.SetField(sb, "opt", opt)
	e.rng.register(L, sb)
	e.registerSQL(sb)
	e.registerReports(sb)
	L.SetGlobal("sysbench", sb)
	L.SetGlobal("thread_id", lua.LNumber(c.tid))
	L.SetGlobal("test", lua.LString(c.s.Path))
	L.SetGlobal("db_driver", lua.LString(c.driver))
	L.SetGlobal("mysql_table_engine", lua.LString("innodb"))
	L.SetGlobal("myisam_max_rows", lua.LNumber(1000000))
	L.SetGlobal("print", L.NewFunction(e.luaPrint))
	e.registerFFI()
	if err := e.registerCompat(); err != nil {
		L.Close()
		return nil, luaError(err)
	}
	if err := e.wrapStepping(); err != nil {
		L.Close()
		return nil, luaError(err)
	}
	fn := L.NewFunctionFromProto(c.s.proto)
	if err := L.CallByParam(lua.P{Fn: fn, NRet: 0, Protect: true}); err != nil {
		L.Close()
		return nil, luaError(err)
	}
	if c.s.legacy {
		// Scripts without sysbench.cmdline.options get the options as globals too
		// (sysbench 1.0 does this for older scripts), unless a function has the name.
		for k, v := range c.opts {
			if _, isFn := L.GetGlobal(k).(*lua.LFunction); !isFn {
				L.SetGlobal(k, optValue(L, c.kinds[k], v))
			}
		}
	}
	return e, nil
}

func (e *env) uniqNil(c envConfig) bool { return c.uniq == nil }

// setPath sets package.path: the script's directory, the working directory, then
// sysbench's own directory (its bundled oltp_common), then LUA_PATH's entries.
func (e *env) setPath() {
	pkg, ok := e.L.GetGlobal("package").(*lua.LTable)
	if !ok {
		return
	}
	dirs := []string{e.s.dir + "/?.lua", "./?.lua", "./?/init.lua"}
	for _, d := range e.s.searchDirs {
		dirs = append(dirs, d+"/?.lua")
	}
	e.L.SetField(pkg, "path", lua.LString(strings.Join(dirs, ";")))
	e.L.SetField(pkg, "cpath", lua.LString(""))
}

func (e *env) luaPrint(L *lua.LState) int {
	var b strings.Builder
	for i := 1; i <= L.GetTop(); i++ {
		if i > 1 {
			b.WriteByte('\t')
		}
		b.WriteString(L.ToStringMeta(L.Get(i)).String())
	}
	b.WriteByte('\n')
	_, _ = io.WriteString(e.out, b.String())
	return 0
}

// command returns the script's function for a command: sysbench.cmdline.commands'
// entry, or a global function of that name for prepare, cleanup and help.
func (e *env) command(name string) *lua.LFunction {
	if f, _ := e.customCommand(name); f != nil {
		return f
	}
	switch name {
	case "prepare", "cleanup", "help", "prewarm":
		if f, ok := e.L.GetGlobal(name).(*lua.LFunction); ok {
			return f
		}
	}
	return nil
}

// customCommand returns sysbench.cmdline.commands[name]: its function and whether it
// runs in every thread (PARALLEL_COMMAND).
func (e *env) customCommand(name string) (*lua.LFunction, bool) {
	cmds, ok := e.cmdline().RawGetString("commands").(*lua.LTable)
	if !ok {
		return nil, false
	}
	def, ok := cmds.RawGetString(name).(*lua.LTable)
	if !ok {
		return nil, false
	}
	f, _ := def.RawGetInt(1).(*lua.LFunction)
	return f, lua.LVAsBool(def.RawGetInt(2))
}

func (e *env) cmdline() *lua.LTable {
	if sb, ok := e.L.GetGlobal("sysbench").(*lua.LTable); ok {
		if c, ok := sb.RawGetString("cmdline").(*lua.LTable); ok {
			return c
		}
	}
	return e.L.NewTable()
}

// call runs a global function if the script defines it; a Lua error comes back as
// one line with the file and line.
func (e *env) call(name string, args ...lua.LValue) error {
	f, ok := e.L.GetGlobal(name).(*lua.LFunction)
	if !ok {
		return nil
	}
	return e.callFn(f, args...)
}

func (e *env) callFn(f *lua.LFunction, args ...lua.LValue) error {
	e.lastErr = nil
	if err := e.L.CallByParam(lua.P{Fn: f, NRet: 0, Protect: true}, args...); err != nil {
		if e.lastErr != nil && e.raised(err) {
			return e.lastErr
		}
		return luaError(err)
	}
	return nil
}

// raised reports whether a Lua error is the SQL error the API last raised.
func (e *env) raised(err error) bool {
	var ae *lua.ApiError
	if !errors.As(err, &ae) || e.lastVal == nil {
		return false
	}
	return ae.Object == e.lastVal || ae.Object.String() == e.lastVal.String()
}

// close ends the state: the script's own connections are closed.
func (e *env) close() {
	for _, c := range append([]*sqlConn(nil), e.own...) {
		e.closeConn(c)
	}
	e.L.Close()
}

// luaError turns a Lua error into one line: the file, the line and the message,
// without Go's or Lua's stack trace.
func luaError(err error) error {
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		return err
	}
	msg := ""
	switch o := ae.Object.(type) {
	case lua.LString:
		msg = string(o)
	case *lua.LTable:
		if m := o.RawGetString("sql_errmsg"); m != lua.LNil {
			msg = fmt.Sprintf("SQL error, errno = %s, state = '%s': %s (raised as a table)", lua.LVAsString(o.RawGetString("sql_errno")), lua.LVAsString(o.RawGetString("sql_state")), lua.LVAsString(m))
		} else {
			msg = "error object is a table"
		}
	case nil:
		msg = err.Error()
	default:
		msg = o.String()
	}
	if i := strings.Index(msg, "\nstack traceback:"); i >= 0 {
		msg = msg[:i]
	}
	return &scriptError{Msg: strings.TrimSpace(strings.ReplaceAll(msg, "\n", " "))}
}

// scriptError is a script's Lua error: "file:line: message".
type scriptError struct{ Msg string }

func (e *scriptError) Error() string { return e.Msg }

// optKind is how sysbench types an option: by its default's Lua type.
type optKind uint8

const (
	kindString optKind = iota
	kindBool
	kindNumber
	kindList
)

func optValue(L *lua.LState, k optKind, v string) lua.LValue {
	switch k {
	case kindBool:
		b, _ := parseBool(v)
		return lua.LBool(b)
	case kindNumber:
		f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return lua.LNumber(f)
	case kindList:
		t := L.NewTable()
		if v != "" {
			for _, s := range strings.Split(v, ",") {
				t.Append(lua.LString(s))
			}
		}
		return t
	}
	return lua.LString(v)
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes", "1":
		return true, true
	case "off", "false", "no", "0", "":
		return false, true
	}
	return false, false
}

// usleep is the think time scripts declare through ffi (ffi.C.usleep).
func (e *env) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.ctx.Done():
	}
}
