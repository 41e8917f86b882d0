-- Differential case: a sysbench 0.5 script. It declares no options, so they come
-- as globals (legacy_rows, legacy_points), and it talks to the server through the
-- db_* functions, with prepared statements bound to tables of variables.

function prepare()
   db_connect()
   db_query("CREATE TABLE sbtest_legacy (id INTEGER NOT NULL PRIMARY KEY, k INTEGER NOT NULL, c VARCHAR(60) NOT NULL)")
   db_bulk_insert_init("INSERT INTO sbtest_legacy (id, k, c) VALUES")
   for i = 1, tonumber(legacy_rows) do
      db_bulk_insert_next(string.format("(%d, %d, '%s')", i, i % 7, sb_rand_str("###-@@@")))
   end
   db_bulk_insert_done()
end

function cleanup()
   db_connect()
   db_query("DROP TABLE IF EXISTS sbtest_legacy")
end

function thread_init(thread_id)
   db_connect()
   rows, points = tonumber(legacy_rows), tonumber(legacy_points)
   point = db_prepare("SELECT c FROM sbtest_legacy WHERE id = ?")
   point_args = {1}
   db_bind_param(point, point_args)
   upd = db_prepare("UPDATE sbtest_legacy SET c = ? WHERE id = ?")
   upd_args = {"", 1}
   db_bind_param(upd, upd_args)
end

function event(thread_id)
   db_query("BEGIN")
   for i = 1, points do
      point_args[1] = sb_rand(1, rows)
      local rs = db_execute(point)
      db_store_results(rs)
      db_free_results(rs)
   end
   -- A longer string than the one bound at first.
   upd_args[1] = sb_rand_str(string.rep("@", 50))
   upd_args[2] = sb_rand_uniform(1, rows)
   db_execute(upd)
   db_query("SELECT k FROM sbtest_legacy WHERE id = " .. sb_rand_uniform(1, rows))
   db_query("COMMIT")
end

function thread_done(thread_id)
   db_close(point)
   db_close(upd)
   db_disconnect()
end
