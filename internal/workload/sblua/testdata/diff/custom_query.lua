-- Differential case: plain queries, result sets, query_row, a module, options.
local m = require("diffmod")

sysbench.cmdline.options = {
   rows = {"Rows in sbtest_kv", 50},
   span = {"Rows per range", 5},
   updates = {"Updates per event", 2},
}

function prepare()
   local con = sysbench.sql.driver():connect()
   con:query("CREATE TABLE sbtest_kv (id INTEGER NOT NULL PRIMARY KEY, v VARCHAR(40) NOT NULL)")
   con:bulk_insert_init("INSERT INTO sbtest_kv (id, v) VALUES")
   for i = 1, sysbench.opt.rows do
      con:bulk_insert_next(string.format("(%d, '%s')", i, sysbench.rand.string("@@@@@-#####")))
   end
   con:bulk_insert_done()
end

function cleanup()
   sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS sbtest_kv")
end

function thread_init()
   con = sysbench.sql.driver():connect()
end

function event()
   local n = con:query_row("SELECT COUNT(*) FROM sbtest_kv")
   assert(tonumber(n) == sysbench.opt.rows, "rows: " .. tostring(n))
   local lo = sysbench.rand.uniform(1, sysbench.opt.rows - sysbench.opt.span)
   local rs = con:query(m.range_sql(lo, lo + sysbench.opt.span - 1))
   local seen = 0
   for i = 1, rs.nrows do
      local row = rs:fetch_row()
      assert(tonumber(row[1]) == lo + i - 1)
      seen = seen + 1
   end
   assert(seen == sysbench.opt.span, "range rows: " .. seen)
   for i = 1, sysbench.opt.updates do
      con:query(string.format("UPDATE sbtest_kv SET v = '%s' WHERE id = %d",
         sysbench.rand.string("@@@-###"), sysbench.rand.gaussian(1, sysbench.opt.rows)))
   end
end
