package sblua

// KeepResults makes w's prepared statements decode their rows through the driver,
// as for a script that reads its result sets: the benchmarks' baseline.
func KeepResults(w *Workload) { w.s.mods.readsResults.Store(true) }

// Yielded is how many statements the workload's finished clients yielded to the
// runner's multiplexed path (step.go).
func Yielded(w *Workload) int64 { return w.yields.Load() }
