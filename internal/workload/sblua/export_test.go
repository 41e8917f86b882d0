package sblua

// KeepResults makes w's prepared statements decode their rows through the driver,
// as for a script that reads its result sets: the benchmarks' baseline.
func KeepResults(w *Workload) { w.s.mods.readsResults.Store(true) }
