local helper = require("helper")

sysbench.cmdline.options = {
   rows = {"rows", 5},
   label = {"a label", "abc"},
   fast = {"a flag", false},
   list = {"a list", {"a", "b"}},
}

function cmd_check()
   assert(sysbench.opt.rows == 7, "rows " .. tostring(sysbench.opt.rows))
   assert(type(sysbench.opt.rows) == "number")
   assert(sysbench.opt.label == "abc")
   assert(sysbench.opt.fast == true)
   assert(#sysbench.opt.list == 2 and sysbench.opt.list[2] == "b")
   assert(sysbench.opt.threads == 3)
   assert(helper.twice(sysbench.opt.rows) == 14)
   assert(string.format("%u-%d-%5.1f-%s", 3.0, 4, 2.25, "x") == "3-4-  2.2-x", string.format("%u-%d-%5.1f-%s", 3.0, 4, 2.25, "x"))
   for i = 1, 1000 do
      local u = sysbench.rand.uniform(5, 9)
      assert(u >= 5 and u <= 9 and u == math.floor(u), "uniform " .. u)
      for _, f in ipairs({sysbench.rand.default, sysbench.rand.gaussian, sysbench.rand.special, sysbench.rand.pareto, sysbench.rand.zipfian, sb_rand}) do
         local v = f(10, 20)
         assert(v >= 10 and v <= 20, "out of range " .. v)
      end
      local s = sysbench.rand.string("##-@@")
      assert(s:match("^%d%d%-%l%l$"), s)
      local vs = sysbench.rand.varstring(2, 4)
      assert(#vs >= 2 and #vs <= 4)
   end
   ffi.cdef("int usleep(int);")
   ffi.C.usleep(1)
   print("checked", sysbench.tid)
end

sysbench.cmdline.commands = {
   check = {cmd_check, sysbench.cmdline.PARALLEL_COMMAND},
   badffi = {function() local x = ffi.new("int[1]") end},
   badc = {function() ffi.C.sb_counter_inc(1, 2) end},
   oops = {function()
      local t = nil
      return t.field
   end},
}

function event() end
