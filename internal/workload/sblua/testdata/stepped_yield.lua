-- fathom's test: event() calling coroutine.yield() itself is the script's mistake.
function thread_init()
  con = sysbench.sql.driver():connect()
  st = con:prepare("SELECT 1")
end
function event()
  st:execute()
  coroutine.yield()
end
