// Package spec runs workload files: a YAML file that declares a workload's
// parameters, value generators, tables and transactions in SQL (or Redis commands),
// with a dialect's variants where databases differ. It decodes the file (decode.go,
// with yamlfile's checks), resolves it against the run's parameters and the target's
// dialect (resolve.go), and runs it as a workload.Workload: Prepare creates and loads
// the tables, each worker draws a transaction by weight and binds its generated
// values to prepared statements (worker.go). The files fathom ships are in
// workload/files; `fathom workloads show` prints one resolved (show.go).
package spec
