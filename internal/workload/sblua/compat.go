package sblua

import (
	"sync"

	"github.com/fathom-lab/fathom/internal/lua"
)

// compatSource is sysbench 0.5's script API (db_connect, db_query, db_prepare,
// db_bind_param, db_execute, db_bulk_insert_* … and sysbench.db), which sysbench 1.0
// keeps for older scripts, written for fathom over the sysbench.sql API: the
// connection is the client's (its first drv:connect()), an error sysbench ignores
// restarts the event, any other stops the script with the server's message.
// db_bind_param binds a table of variables whose values are read again at each
// db_execute, their types (number or string) fixed by the values they hold when bound.
const compatSource = `
local sql = sysbench.sql
local con
local function connect()
   if con == nil then con = sql.driver():connect() end
   return con
end
local function connected(name)
   if con == nil then error(name .. ": Uninitialized database connection", 3) end
   return con
end
local db = {DB_ERROR_NONE = 0, DB_ERROR_RESTART_TRANSACTION = 1, DB_ERROR_FAILED = 2}
function db.connect() connect() end
function db.disconnect()
   if con ~= nil then con:disconnect(); con = nil end
end
function db.query(q) connect():query(q) end
function db.bulk_insert_init(q) connect():bulk_insert_init(q) end
function db.bulk_insert_next(v) connected("db_bulk_insert_next"):bulk_insert_next(v) end
function db.bulk_insert_done() connected("db_bulk_insert_done"):bulk_insert_done() end
function db.prepare(q) return {stmt = connect():prepare(q)} end
local minCap = 256
function db.bind_param(st, vars)
   if type(vars) ~= "table" then error("db_bind_param: table was expected", 2) end
   if #vars == 0 then error("db_bind_param: table is empty", 2) end
   st.vars, st.params, st.caps = vars, {}, {}
   for i = 1, #vars do
      local v = vars[i]
      if type(v) == "number" then
         st.params[i] = st.stmt:bind_create(sql.type.BIGINT)
      elseif type(v) == "string" then
         st.caps[i] = math.max(minCap, 2 * #v)
         st.params[i] = st.stmt:bind_create(sql.type.VARCHAR, st.caps[i])
      else
         error("db_bind_param: Unsupported variable type: " .. type(v), 2)
      end
   end
   st.stmt:bind_param(unpack(st.params))
end
function db.bind_result()
   error("db_bind_result is not supported by fathom: read results through db_execute's result set", 2)
end
function db.execute(st)
   if st.vars ~= nil then
      local rebind = false
      for i = 1, #st.params do
         local v = st.vars[i]
         if st.caps[i] ~= nil and v ~= nil and #tostring(v) > st.caps[i] then
            st.caps[i] = 2 * #tostring(v)
            st.params[i] = st.stmt:bind_create(sql.type.VARCHAR, st.caps[i])
            rebind = true
         end
      end
      if rebind then st.stmt:bind_param(unpack(st.params)) end
      for i = 1, #st.params do st.params[i]:set(st.vars[i]) end
   end
   return st.stmt:execute()
end
function db.close(st) st.stmt:close() end
function db.store_results(rs) end
function db.free_results(rs) end
sysbench.db = db
db_connect, db_disconnect, db_query = db.connect, db.disconnect, db.query
db_bulk_insert_init, db_bulk_insert_next, db_bulk_insert_done = db.bulk_insert_init, db.bulk_insert_next, db.bulk_insert_done
db_prepare, db_bind_param, db_bind_result, db_execute = db.prepare, db.bind_param, db.bind_result, db.execute
db_close, db_store_results, db_free_results = db.close, db.store_results, db.free_results
DB_ERROR_NONE, DB_ERROR_RESTART_TRANSACTION, DB_ERROR_FAILED = 0, 1, 2
`

var compatProto = sync.OnceValues(func() (*lua.FunctionProto, error) {
	return compileString(compatSource, "=sysbench.compat")
})

// registerCompat defines sysbench 0.5's API in the state (see compatSource).
func (e *env) registerCompat() error {
	p, err := compatProto()
	if err != nil {
		return err
	}
	return e.L.CallByParam(lua.P{Fn: e.L.NewFunctionFromProto(p), NRet: 0, Protect: true})
}
