// Command fathom is a database performance lab: it runs pgbench- and sysbench-style
// workloads against PostgreSQL, MySQL/MariaDB and SQLite, measures latency exactly and
// keeps every result. See README.md.
package main

import "github.com/fathom-lab/fathom/internal/cli"

func main() { cli.Main() }
