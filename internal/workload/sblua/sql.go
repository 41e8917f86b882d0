package sblua

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/lua"

	"github.com/fathom-lab/fathom/internal/target"
)

// sysbench.sql.type, numbered as sysbench's sql_bind_type_t.
var sqlTypes = []string{"NONE", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "TIME", "DATE", "DATETIME", "TIMESTAMP", "CHAR", "VARCHAR"}

const (
	typeTinyint  = 1
	typeBigint   = 4
	typeFloat    = 5
	typeDouble   = 6
	typeChar     = 11
	typeVarchar  = 12
	restartEvent = 1 // sysbench.error.RESTART_EVENT
	bulkPacket   = 512 * 1024
)

// sqlConn is a script's connection (drv:connect()). The first one a client opens is
// the runner's own connection for that client, so that reconnects, -C and the
// server's view of the client are the runner's; further ones are opened from the
// target and belong to the script.
type sqlConn struct {
	e       *env
	conn    target.Conn
	primary bool
	closed  bool
	stmts   []*sqlStmt
	bulk    []byte // the bulk insert's statement so far; nil when none is open
	bulkLen int    // length of the INSERT … VALUES prefix
	bulkCnt int
	res     *sqlResult
	ud      *lua.LUserData
}

type sqlStmt struct {
	c      *sqlConn
	sql    string
	st     target.Stmt
	ex     int8 // whether st is an Exchanger on a socket: 0 not asked yet, 1 yes, -1 no
	params []*sqlParam
	args   []target.Value
	res    *sqlResult
	closed bool
	class  int // sysbench's counter of its statements: other, read or write
}

type sqlParam struct {
	typ    int
	maxLen int
	val    target.Value
	buf    []byte
}

// sqlResult is what a query or an execute returned: its rows as text (only the
// first row for a prepared statement), read by rs:fetch_row().
type sqlResult struct {
	skipped bool // the rows were skipped on the wire (runDirect): nothing to read
	rows    [][]string
	first   target.Result
	stmt    bool
	nrows   int64
	nfields int
	next    int
	ud      *lua.LUserData
}

func (e *env) registerSQL(sb *lua.LTable) {
	L := e.L
	sqlT := L.NewTable()
	types := L.NewTable()
	for i, n := range sqlTypes {
		L.SetField(types, n, lua.LNumber(i))
	}
	L.SetField(sqlT, "type", types)
	errs := L.NewTable()
	L.SetField(errs, "NONE", lua.LNumber(0))
	L.SetField(errs, "IGNORABLE", lua.LNumber(1))
	L.SetField(errs, "FATAL", lua.LNumber(2))
	L.SetField(sqlT, "error", errs)

	drvMT := L.NewTable()
	drvMethods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"connect": e.luaConnect,
		"name": func(L *lua.LState) int {
			L.Push(lua.LString(e.driver))
			return 1
		},
	})
	L.SetField(drvMT, "__index", drvMethods)
	L.SetField(drvMT, "__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("<sql_driver>")); return 1 }))
	L.SetField(sqlT, "driver", L.NewFunction(func(L *lua.LState) int {
		if name := L.OptString(1, ""); name != "" && name != e.driver {
			L.RaiseError("sysbench.sql.driver(%q): this run's target is %s (--target chooses the database)", name, e.driver)
		}
		ud := L.NewUserData()
		L.SetMetatable(ud, drvMT)
		L.Push(ud)
		return 1
	}))
	L.SetField(sb, "sql", sqlT)

	e.connMT = L.NewTable()
	L.SetField(e.connMT, "__index", L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"query":            e.luaQuery,
		"query_row":        e.luaQueryRow,
		"prepare":          e.luaPrepare,
		"disconnect":       e.luaDisconnect,
		"reconnect":        e.luaReconnect,
		"bulk_insert_init": e.luaBulkInit,
		"bulk_insert_next": e.luaBulkNext,
		"bulk_insert_done": e.luaBulkDone,
		"more_results":     func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"next_result":      func(L *lua.LState) int { L.Push(lua.LNil); return 1 },
		"check_error":      func(L *lua.LState) int { L.Push(L.Get(2)); return 1 },
	}))
	L.SetField(e.connMT, "__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("<sql_connection>")); return 1 }))

	e.stmtMT = L.NewTable()
	L.SetField(e.stmtMT, "__index", L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"bind_create": e.luaBindCreate,
		"bind_param":  e.luaBindParam,
		"execute":     e.luaExecute,
		"close":       e.luaStmtClose,
		"bind_result": func(L *lua.LState) int {
			L.RaiseError("stmt:bind_result() is not supported: read results with rs:fetch_row()")
			return 0
		},
		"next_result": func(L *lua.LState) int { L.Push(lua.LNil); return 1 },
	}))
	L.SetField(e.stmtMT, "__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("<sql_statement>")); return 1 }))

	e.paramMT = L.NewTable()
	L.SetField(e.paramMT, "__index", L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"set":          e.luaParamSet,
		"set_rand_str": e.luaParamSetRandStr,
	}))
	L.SetField(e.paramMT, "__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("<sql_param>")); return 1 }))

	e.resMethods = L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"fetch_row": e.luaFetchRow,
		"free":      func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
	})
	e.resMT = L.NewTable()
	L.SetField(e.resMT, "__index", L.NewFunction(e.luaResIndex))
	L.SetField(e.resMT, "__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("<sql_result>")); return 1 }))
}

func (e *env) luaConnect(L *lua.LState) int {
	c := &sqlConn{e: e}
	if e.primary != nil && !e.primaryUsed {
		c.conn, c.primary = e.primary, true
		e.primaryUsed = true
		e.primaryConn = c
	} else {
		if e.tgt == nil {
			L.RaiseError("connection creation failed: no target")
		}
		conn, err := e.tgt.Connect(e.ctx)
		if err != nil {
			L.RaiseError("connection creation failed: %v", err)
		}
		c.conn = conn
		e.own = append(e.own, c)
	}
	c.res = e.newResult()
	c.ud = L.NewUserData()
	c.ud.Value = c
	L.SetMetatable(c.ud, e.connMT)
	L.Push(c.ud)
	return 1
}

func (e *env) checkConn(L *lua.LState) *sqlConn {
	ud := L.CheckUserData(1)
	c, ok := ud.Value.(*sqlConn)
	if !ok {
		L.ArgError(1, "a connection expected")
	}
	if c.closed {
		L.RaiseError("the connection is closed (con:disconnect() was called)")
	}
	return c
}

func (e *env) newResult() *sqlResult {
	r := &sqlResult{}
	r.ud = e.L.NewUserData()
	r.ud.Value = r
	e.L.SetMetatable(r.ud, e.resMT)
	return r
}

// sqlFail raises a failed statement's error in the script as sysbench does: a
// 'restart event' error descriptor for the errors sysbench ignores by default
// (deadlocks, lock wait timeouts, serialization failures; or those the script's
// sysbench.hooks.sql_error_ignorable accepts), a plain SQL error message for the rest.
// The error itself is kept so that the runner sees its class.
func (e *env) sqlFail(L *lua.LState, c *sqlConn, query string, err error) int {
	e.lastErr = err
	e.lastWhere = scriptWhere(L)
	errno, state, msg := 0, "", err.Error()
	var te *target.Error
	if asTargetError(err, &te) {
		msg = te.Msg
		if e.driver == "mysql" {
			errno, _ = strconv.Atoi(te.Code)
		} else {
			state = te.Code
		}
	}
	if target.ClassOf(err) == target.ClassCanceled || e.ctx.Err() != nil {
		e.lastVal = lua.LString("canceled")
		L.Error(e.lastVal, 0)
		return 0
	}
	desc := L.NewTable()
	L.SetField(desc, "connection", c.ud)
	L.SetField(desc, "query", lua.LString(query))
	L.SetField(desc, "sql_errno", lua.LNumber(errno))
	L.SetField(desc, "sql_state", lua.LString(state))
	L.SetField(desc, "sql_errmsg", lua.LString(msg))
	ignorable := e.ignorable(errno, state)
	if !ignorable {
		if hook, ok := e.hook("sql_error_ignorable").(*lua.LFunction); ok {
			L.Push(hook)
			L.Push(desc)
			e.step.nested++ // statements in the hook run to completion (step.go)
			L.Call(1, 1)
			e.step.nested--
			ignorable = lua.LVAsBool(L.Get(-1))
			L.Pop(1)
		}
	}
	if ignorable {
		L.SetField(desc, "errcode", lua.LNumber(restartEvent))
		e.lastVal = desc
		L.Error(desc, 0)
		return 0
	}
	s := fmt.Sprintf("SQL error, errno = %d, state = '%s': %s", errno, state, msg)
	e.lastVal = lua.LString(e.lastWhere + s)
	L.Error(e.lastVal, 0)
	return 0
}

// ignorable are the errors sysbench 1.0 restarts the event on by default: MySQL's
// --mysql-ignore-errors default (1213 deadlock, 1020 record changed, 1205 lock wait
// timeout) and the PostgreSQL driver's deadlock, unique violation and serialization
// failure.
func (e *env) ignorable(errno int, state string) bool {
	if e.driver == "mysql" {
		return errno == 1213 || errno == 1020 || errno == 1205
	}
	return state == "40P01" || state == "23505" || state == "40001"
}

func (e *env) hook(name string) lua.LValue {
	sb, ok := e.L.GetGlobal("sysbench").(*lua.LTable)
	if !ok {
		return lua.LNil
	}
	hooks, ok := sb.RawGetString("hooks").(*lua.LTable)
	if !ok {
		return lua.LNil
	}
	return hooks.RawGetString(name)
}

func (e *env) luaQuery(L *lua.LState) int {
	c := e.checkConn(L)
	q := L.CheckString(2)
	if e.canYield(L, c) {
		if qx, ok := c.conn.(target.QueryExchanging); ok {
			if ex, ok := qx.QueryExchanger(q); ok {
				return e.yield(L, c, ex, nil, q, queryClass(q), c.res)
			}
		}
	}
	rows, err := c.conn.Query(e.ctx, q)
	e.sent(q)
	if err != nil {
		return e.sqlFail(L, c, q, err)
	}
	r := c.res
	r.stmt, r.rows, r.next = false, rows, 0
	r.nrows = int64(len(rows))
	r.nfields = 0
	if len(rows) > 0 {
		r.nfields = len(rows[0])
	}
	L.Push(r.ud)
	return 1
}

func (e *env) luaQueryRow(L *lua.LState) int {
	c := e.checkConn(L)
	q := L.CheckString(2)
	rows, err := c.conn.Query(e.ctx, q)
	e.sent(q)
	if err != nil {
		return e.sqlFail(L, c, q, err)
	}
	if len(rows) == 0 {
		L.Push(lua.LNil)
		return 1
	}
	for _, v := range rows[0] {
		L.Push(lua.LString(v))
	}
	return len(rows[0])
}

func (e *env) luaPrepare(L *lua.LState) int {
	c := e.checkConn(L)
	q := L.CheckString(2)
	st, err := c.conn.Prepare(e.ctx, q)
	if err != nil {
		return e.sqlFail(L, c, q, err)
	}
	s := &sqlStmt{c: c, sql: q, st: st, class: queryClass(q)}
	s.res = e.newResult()
	s.res.stmt = true
	s.res.first.Keep = true
	c.stmts = append(c.stmts, s)
	ud := L.NewUserData()
	ud.Value = s
	L.SetMetatable(ud, e.stmtMT)
	L.Push(ud)
	return 1
}

// rebind prepares c's statements again on its (new) connection after a reconnect.
func (c *sqlConn) rebind(ctx context.Context) error {
	c.bulk = nil
	for _, s := range c.stmts {
		if s.closed {
			continue
		}
		st, err := c.conn.Prepare(ctx, s.sql)
		if err != nil {
			return err
		}
		s.st, s.ex = st, 0
	}
	return nil
}

// exchanger returns the statement as a target.Exchanger whose socket can be used
// (asked once per prepared statement).
func (s *sqlStmt) exchanger() (target.Exchanger, bool) {
	ex, ok := s.st.(target.Exchanger)
	if s.ex == 0 {
		s.ex = -1
		if ok {
			if _, sok := ex.Socket(); sok {
				s.ex = 1
			}
		}
	}
	return ex, s.ex == 1
}

func (e *env) luaDisconnect(L *lua.LState) int {
	c := e.checkConn(L)
	e.closeConn(c)
	L.Push(lua.LTrue)
	return 1
}

// closeConn closes a script's connection; the runner's own is left to the runner
// and handed out again by the next drv:connect().
func (e *env) closeConn(c *sqlConn) {
	for _, s := range c.stmts {
		if !s.closed && s.st != nil {
			_ = s.st.Close()
			s.closed = true
		}
	}
	c.stmts = nil
	c.closed = true
	if c.primary {
		e.primaryUsed = false
		e.primaryConn = nil
		return
	}
	_ = c.conn.Close()
	for i, o := range e.own {
		if o == c {
			e.own = append(e.own[:i], e.own[i+1:]...)
			break
		}
	}
}

func (e *env) luaReconnect(L *lua.LState) int {
	c := e.checkConn(L)
	if !c.primary {
		_ = c.conn.Close()
		conn, err := e.tgt.Connect(e.ctx)
		if err != nil {
			L.RaiseError("reconnect failed: %v", err)
		}
		c.conn = conn
		if err := c.rebind(e.ctx); err != nil {
			return e.sqlFail(L, c, "<prepared statement>", err)
		}
	}
	L.Push(lua.LTrue)
	return 1
}

func (e *env) luaBulkInit(L *lua.LState) int {
	c := e.checkConn(L)
	q := L.CheckString(2)
	if len(q)+1 > bulkPacket {
		L.RaiseError("db_bulk_insert_init() failed: the query is longer than %d bytes", bulkPacket)
	}
	c.bulk = append(make([]byte, 0, 64*1024), q...)
	c.bulkLen, c.bulkCnt = len(q), 0
	L.Push(lua.LTrue)
	return 1
}

// luaBulkNext adds a row to the bulk insert, sending the statement first when the
// row would take it past sysbench's 512 KiB.
func (e *env) luaBulkNext(L *lua.LState) int {
	c := e.checkConn(L)
	v := L.CheckString(2)
	if c.bulk == nil {
		L.RaiseError("db_bulk_insert_next() failed: bulk_insert_init() was not called")
	}
	extra := 0
	if c.bulkCnt > 0 {
		extra = 1
	}
	if len(c.bulk)+len(v)+1+extra > bulkPacket {
		if c.bulkCnt == 0 {
			L.RaiseError("db_bulk_insert_next() failed: a row is longer than %d bytes", bulkPacket)
		}
		if !e.bulkFlush(L, c) {
			return 0
		}
		extra = 0
	}
	if extra > 0 {
		c.bulk = append(c.bulk, ',')
	}
	c.bulk = append(c.bulk, v...)
	c.bulkCnt++
	L.Push(lua.LTrue)
	return 1
}

func (e *env) bulkFlush(L *lua.LState, c *sqlConn) bool {
	if c.bulkCnt == 0 {
		return true
	}
	q := string(c.bulk)
	c.bulk, c.bulkCnt = c.bulk[:c.bulkLen], 0
	err := c.conn.Exec(e.ctx, q)
	e.sent(q)
	if err != nil {
		e.sqlFail(L, c, q, err)
		return false
	}
	return true
}

func (e *env) luaBulkDone(L *lua.LState) int {
	c := e.checkConn(L)
	if c.bulk != nil {
		if !e.bulkFlush(L, c) {
			return 0
		}
	}
	c.bulk = nil
	L.Push(lua.LTrue)
	return 1
}

func checkStmt(L *lua.LState) *sqlStmt {
	ud := L.CheckUserData(1)
	s, ok := ud.Value.(*sqlStmt)
	if !ok {
		L.ArgError(1, "a statement expected")
	}
	return s
}

func (e *env) luaBindCreate(L *lua.LState) int {
	checkStmt(L)
	typ := L.CheckInt(2)
	p := &sqlParam{}
	switch {
	case typ >= typeTinyint && typ <= typeBigint:
		p.typ, p.val = typeBigint, target.Int64(0)
	case typ == typeFloat || typ == typeDouble:
		p.typ, p.val = typeDouble, target.Float(0)
	case typ == typeChar || typ == typeVarchar:
		p.typ = typeVarchar
		p.maxLen = L.CheckInt(3)
		p.buf = make([]byte, 0, p.maxLen)
		p.val = target.Text(p.buf)
	default:
		L.RaiseError("Unsupported argument type: %d", typ)
	}
	ud := L.NewUserData()
	ud.Value = p
	L.SetMetatable(ud, e.paramMT)
	L.Push(ud)
	return 1
}

func (e *env) luaBindParam(L *lua.LState) int {
	s := checkStmt(L)
	n := L.GetTop() - 1
	s.params = s.params[:0]
	for i := 2; i <= n+1; i++ {
		p, ok := L.CheckUserData(i).Value.(*sqlParam)
		if !ok {
			L.ArgError(i, "a parameter from stmt:bind_create() expected")
		}
		s.params = append(s.params, p)
	}
	s.args = make([]target.Value, len(s.params))
	L.Push(lua.LNumber(0))
	return 1
}

func checkParam(L *lua.LState) *sqlParam {
	p, ok := L.CheckUserData(1).Value.(*sqlParam)
	if !ok {
		L.ArgError(1, "a parameter expected")
	}
	return p
}

func (e *env) luaParamSet(L *lua.LState) int {
	p := checkParam(L)
	v := L.Get(2)
	if v == lua.LNil {
		p.val = target.Null()
		return 0
	}
	switch p.typ {
	case typeBigint:
		n, ok := toNumber(v)
		if !ok {
			L.ArgError(2, "a number expected")
		}
		p.val = target.Int64(int64(n))
	case typeDouble:
		n, ok := toNumber(v)
		if !ok {
			L.ArgError(2, "a number expected")
		}
		p.val = target.Float(n)
	default:
		s := lua.LVAsString(v)
		if len(s) > p.maxLen {
			s = s[:p.maxLen]
		}
		p.buf = append(p.buf[:0], s...)
		p.val = target.Text(p.buf)
	}
	return 0
}

func toNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil
	case lua.LBool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func (e *env) luaParamSetRandStr(L *lua.LState) int {
	p := checkParam(L)
	tmpl := L.CheckString(2)
	if p.typ != typeVarchar {
		L.RaiseError("Unsupported argument type: %d", p.typ)
	}
	if len(tmpl) > p.maxLen {
		tmpl = tmpl[:p.maxLen]
	}
	p.buf = e.rng.fill(p.buf, tmpl)
	p.val = target.Text(p.buf)
	return 0
}

func (e *env) luaExecute(L *lua.LState) int {
	s := checkStmt(L)
	if s.closed {
		L.RaiseError("the statement is closed")
	}
	for i, p := range s.params {
		s.args[i] = p.val
	}
	r := s.res
	if !e.s.mods.readsResults.Load() {
		if e.canYield(L, s.c) {
			if ex, ok := s.exchanger(); ok {
				return e.yield(L, s.c, ex, s.args, "<prepared statement>", s.class, r)
			}
		}
		if d, ok := s.st.(directRunner); ok {
			if ran, err := d.RunDirect(e.ctx, s.args); ran {
				e.sentClass(s.class)
				if err != nil {
					return e.sqlFail(L, s.c, "<prepared statement>", err)
				}
				r.skipped, r.nrows, r.nfields, r.next = true, 0, 0, 0
				L.Push(r.ud)
				return 1
			}
		}
	}
	r.skipped = false
	err := s.st.Run(e.ctx, s.args, &r.first)
	e.sentClass(s.class)
	if err != nil {
		return e.sqlFail(L, s.c, "<prepared statement>", err)
	}
	r.nrows, r.nfields, r.next = r.first.Rows, len(r.first.First), 0
	if r.nrows == 0 {
		r.nrows = r.first.RowsAffected
	}
	L.Push(r.ud)
	return 1
}

// directRunner is a prepared statement that can run with its reply's rows skipped
// on the wire rather than decoded by the driver (MySQL's RunDirect): what a script
// that never reads a result set needs, at a fraction of the client's CPU. ran is
// false when this statement cannot run so; Run is then used.
type directRunner interface {
	RunDirect(ctx context.Context, args []target.Value) (ran bool, err error)
}

// skippedResult stops a script that reads a result set whose rows were skipped: one
// whose text names none of rs:fetch_row(), rs.nrows, rs.nfields (readsResults) and
// still reaches them, by a computed name.
func skippedResult(L *lua.LState, what string) {
	L.RaiseError("rs.%s: fathom skipped this result's rows because the script's text never names fetch_row, nrows or nfields; name one of them in the script (a comment will do) to keep results", what)
}

func (e *env) luaStmtClose(L *lua.LState) int {
	s := checkStmt(L)
	if !s.closed && s.st != nil {
		_ = s.st.Close()
	}
	s.closed = true
	L.Push(lua.LNumber(0))
	return 1
}

func (e *env) luaResIndex(L *lua.LState) int {
	r, ok := L.CheckUserData(1).Value.(*sqlResult)
	if !ok {
		L.ArgError(1, "a result set expected")
	}
	k := L.CheckString(2)
	if r.skipped && (k == "nrows" || k == "nfields" || k == "fetch_row") {
		skippedResult(L, k)
	}
	switch k {
	case "nrows":
		L.PushNumber(float64(r.nrows))
	case "nfields":
		L.PushNumber(float64(r.nfields))
	default:
		L.Push(e.resMethods.RawGetString(k))
	}
	return 1
}

// luaFetchRow returns the next row as a table of strings (NULL as nil); a prepared
// statement's result keeps its first row only.
func (e *env) luaFetchRow(L *lua.LState) int {
	r, ok := L.CheckUserData(1).Value.(*sqlResult)
	if !ok {
		L.ArgError(1, "a result set expected")
	}
	t := L.NewTable()
	if r.stmt {
		if r.next > 0 || len(r.first.First) == 0 {
			L.Push(lua.LNil)
			return 1
		}
		r.next++
		for i, v := range r.first.First {
			if v.Kind == target.KindNull {
				continue
			}
			t.RawSetInt(i+1, lua.LString(valueText(v)))
		}
		L.Push(t)
		return 1
	}
	if r.next >= len(r.rows) {
		L.Push(lua.LNil)
		return 1
	}
	for i, v := range r.rows[r.next] {
		t.RawSetInt(i+1, lua.LString(v))
	}
	r.next++
	L.Push(t)
	return 1
}

func valueText(v target.Value) string {
	switch v.Kind {
	case target.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case target.KindFloat:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case target.KindTime:
		return v.Time.String()
	}
	return string(v.Text)
}

func asTargetError(err error, te **target.Error) bool { return errors.As(err, te) }

// scriptWhere is where the script called the statement that failed: the first
// frame outside fathom's sysbench 0.5 layer (compatSource), "file:line: ".
func scriptWhere(L *lua.LState) string {
	for lvl := 1; lvl < 8; lvl++ {
		w := L.Where(lvl)
		if w != "" && !strings.Contains(w, "sysbench.compat") {
			return w
		}
	}
	return L.Where(1)
}
