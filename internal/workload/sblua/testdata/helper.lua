local M = {}
function M.twice(x) return 2 * x end
return M
