-- fathom's test: event() returning true ends the client (its last event uncounted).
function thread_init()
  con = sysbench.sql.driver():connect()
  st = con:prepare("SELECT 1")
  n = 0
end
function event()
  n = n + 1
  st:execute()
  if n >= 7 then return true end
end
