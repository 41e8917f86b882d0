-- A module of the custom scripts: found beside them (fathom) or through LUA_PATH.
local M = {}

function M.range_sql(lo, hi)
   return string.format("SELECT id, v FROM sbtest_kv WHERE id BETWEEN %u AND %u ORDER BY id", lo, hi)
end

return M
