-- fathom's test of events run a statement at a time (step.go): prepared statements
-- and con:query() on the runner's connection, an explicit transaction, a statement
-- inside pcall (run to completion), and a duplicate key every fifth event, which the
-- hook below makes sysbench's "restart the event" error.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  ins = con:prepare("INSERT INTO steps (client, n, note) VALUES (?, ?, ?)")
  p = { ins:bind_create(sysbench.sql.type.INT), ins:bind_create(sysbench.sql.type.INT),
        ins:bind_create(sysbench.sql.type.VARCHAR, 20) }
  ins:bind_param(unpack(p))
  begin_st = con:prepare("BEGIN")
  commit_st = con:prepare("COMMIT")
  n = 0
  retried = false
end

function event()
  n = n + 1
  begin_st:execute()
  local id = n
  if n % 5 == 0 and not retried then id = n - 1 end
  p[1]:set(sysbench.tid)
  p[2]:set(id)
  p[3]:set("event")
  ins:execute()
  con:query("UPDATE steps_total SET events = events + 1 WHERE client = " .. sysbench.tid)
  pcall(function() con:query("UPDATE steps_total SET nested = nested + 1 WHERE client = " .. sysbench.tid) end)
  commit_st:execute()
  retried = false
end

sysbench.hooks.sql_error_ignorable = function(err) return err.sql_errno == 1062 end

function sysbench.hooks.before_restart_event(err)
  retried = true
  n = n - 1
end
