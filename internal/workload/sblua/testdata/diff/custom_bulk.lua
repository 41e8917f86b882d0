-- Differential case: a bulk insert in every event, prepared statements with
-- VARCHAR and BIGINT parameters, and an error caught by the script.
sysbench.cmdline.options = {
   batch = {"Rows per bulk insert", 4},
}

function prepare()
   local con = sysbench.sql.driver():connect()
   con:query("CREATE TABLE sbtest_bulk (id BIGINT NOT NULL PRIMARY KEY, tag VARCHAR(16), n INTEGER)")
end

function cleanup()
   sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS sbtest_bulk")
end

function thread_init()
   con = sysbench.sql.driver():connect()
   upd = con:prepare("UPDATE sbtest_bulk SET tag = ?, n = n + 1 WHERE id = ?")
   p_tag = upd:bind_create(sysbench.sql.type.VARCHAR, 16)
   p_id = upd:bind_create(sysbench.sql.type.BIGINT)
   upd:bind_param(p_tag, p_id)
   next_id = 1
end

function event()
   con:bulk_insert_init("INSERT INTO sbtest_bulk (id, tag, n) VALUES")
   for i = 1, sysbench.opt.batch do
      con:bulk_insert_next(string.format("(%d, '%s', 0)", next_id, sysbench.rand.string("@@@@")))
      next_id = next_id + 1
   end
   con:bulk_insert_done()
   p_tag:set_rand_str("##########")
   p_id:set(next_id - 1)
   upd:execute()
   -- A statement that fails, caught by the script: sent all the same.
   local ok = pcall(function() con:query("SELECT nothing FROM sbtest_missing") end)
   assert(not ok, "the bad query succeeded")
end

function thread_done()
   upd:close()
   con:disconnect()
end
