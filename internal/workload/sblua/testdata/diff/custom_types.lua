-- Differential case: options of every type (number, boolean, string, list), init and
-- done, sysbench.tid, a second connection per thread, prepared statements with
-- parameters of several SQL types, result sets read by field count, and the random
-- distributions choosing rows.
sysbench.cmdline.options = {
   rows = {"Rows in sbtest_types", 60},
   verbose_checks = {"Read every row's fields back", true},
   tag = {"Text stored in every update", "fathom"},
   steps = {"Increments applied in turn, one update each", {1, 5, 20}},
   skip_scan = {"Skip the counting scan", false},
}

function init()
   -- Runs once, before the threads; nothing to send.
   assert(type(sysbench.opt.steps) == "table", "steps is a list")
   assert(sysbench.opt.verbose_checks == true and sysbench.opt.skip_scan == false)
end

function prepare()
   local con = sysbench.sql.driver():connect()
   con:query([[CREATE TABLE sbtest_types (
      id INTEGER NOT NULL PRIMARY KEY, small SMALLINT NOT NULL, big BIGINT NOT NULL,
      ratio DOUBLE PRECISION NOT NULL, code CHAR(4) NOT NULL, note VARCHAR(32) NOT NULL)]])
   con:bulk_insert_init("INSERT INTO sbtest_types (id, small, big, ratio, code, note) VALUES")
   for i = 1, sysbench.opt.rows do
      con:bulk_insert_next(string.format("(%d, %d, %d, %d.5, 'c%03d', 'n%d')", i, i % 100, i * 1000, i, i % 1000, i))
   end
   con:bulk_insert_done()
   con:disconnect()
end

function cleanup()
   sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS sbtest_types")
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   aux = drv:connect()
   -- No DOUBLE parameter: setting one crashes sysbench 1.0.20 (a segmentation fault on
   -- MariaDB); fathom binds it, but there is nothing to compare against.
   upd = con:prepare("UPDATE sbtest_types SET small = ?, big = big + ?, code = ?, note = ? WHERE id = ?")
   p_small = upd:bind_create(sysbench.sql.type.SMALLINT)
   p_big = upd:bind_create(sysbench.sql.type.BIGINT)
   p_code = upd:bind_create(sysbench.sql.type.CHAR, 4)
   p_note = upd:bind_create(sysbench.sql.type.VARCHAR, 32)
   p_id = upd:bind_create(sysbench.sql.type.INT)
   upd:bind_param(p_small, p_big, p_code, p_note, p_id)
   sel = con:prepare("SELECT small, big, code FROM sbtest_types WHERE id = ?")
   s_id = sel:bind_create(sysbench.sql.type.INT)
   sel:bind_param(s_id)
   step = 0
   -- One client here: thread 0 starts at row 1.
   base = sysbench.tid + 1
end

function event()
   local rows = sysbench.opt.rows
   step = step % #sysbench.opt.steps + 1
   local id = sysbench.rand.special(1, rows)
   p_small:set(step)
   p_big:set(tonumber(sysbench.opt.steps[step]))
   p_code:set(string.format("s%03d", step))
   p_note:set(sysbench.opt.tag .. "-" .. sysbench.rand.pareto(1, rows))
   p_id:set(id)
   upd:execute()
   s_id:set(sysbench.rand.gaussian(base, rows))
   sel:execute()
   if sysbench.opt.verbose_checks then
      local rs = aux:query(string.format("SELECT id, small, big, ratio, code, note FROM sbtest_types WHERE id = %d", sysbench.rand.uniform(1, rows)))
      assert(rs.nfields == 6, "fields: " .. tostring(rs.nfields))
      local row = rs:fetch_row()
      assert(row ~= nil and #row == 6, "a row of six fields")
      rs:free()
   end
   if not sysbench.opt.skip_scan then
      local n = aux:query_row("SELECT COUNT(*) FROM sbtest_types WHERE small < 100")
      assert(tonumber(n) == rows, "count: " .. tostring(n))
   end
end

function thread_done()
   sel:close()
   upd:close()
   aux:disconnect()
   con:disconnect()
end

function done()
   -- Runs once, after the threads.
end
