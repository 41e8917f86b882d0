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
   -- LuaJIT's bit module, global and required: 32-bit results, signed.
   local b = require("bit")
   assert(b == bit)
   local function eq(got, want, what) assert(got == want, what .. ": " .. tostring(got) .. ", want " .. tostring(want)) end
   eq(bit.tobit(0xffffffff), -1, "tobit 2^32-1")
   eq(bit.tobit(2^32 + 5), 5, "tobit 2^32+5")
   eq(bit.tobit(-1), -1, "tobit -1")
   eq(bit.bor(1, 2, 8), 11, "bor")
   eq(bit.band(0x12345678, 0xff), 0x78, "band")
   eq(bit.bxor(1, 3, 5), 7, "bxor")
   eq(bit.bnot(0), -1, "bnot")
   eq(bit.lshift(1, 31), -2147483648, "lshift 31")
   eq(bit.lshift(1, 33), 2, "lshift counts mod 32")
   eq(bit.rshift(-1, 28), 15, "rshift")
   eq(bit.arshift(-256, 4), -16, "arshift")
   eq(bit.rol(0x12345678, 12), 0x45678123, "rol")
   eq(bit.ror(0x12345678, 12), 0x67812345, "ror")
   eq(bit.bswap(0x12345678), 0x78563412, "bswap")
   eq(bit.tohex(255), "000000ff", "tohex")
   eq(bit.tohex(-1, -4), "FFFF", "tohex upper")
   eq(bit.tohex(0x1234, 2), "34", "tohex 2")
   ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)
   eq(ffi.C.SB_CNT_ERROR, 4, "SB_CNT_ERROR")
   print("checked", sysbench.tid)
end

sysbench.cmdline.commands = {
   check = {cmd_check, sysbench.cmdline.PARALLEL_COMMAND},
   badffi = {function() local x = ffi.new("int[1]") end},
   badc = {function() ffi.C.getpid() end},
   oops = {function()
      local t = nil
      return t.field
   end},
}

function event() end
