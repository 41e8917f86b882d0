-- fathom's test: a statement that fails on the server, raised at this file's line 6.
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  con:query("SELECT * FROM no_such_table_for_steps")
end
