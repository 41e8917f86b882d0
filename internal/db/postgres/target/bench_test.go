package postgres

import (
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

const sbCreate = "CREATE TABLE %s (id integer NOT NULL PRIMARY KEY, k integer NOT NULL DEFAULT 0, c char(120) NOT NULL DEFAULT '', pad char(60) NOT NULL DEFAULT '')"

// BenchmarkPointSelect runs sysbench's oltp_point_select statement on one connection
// and reports cpu-ns/op beside ns/op (see targettest.PointSelect).
func BenchmarkPointSelect(b *testing.B) {
	targettest.PointSelect(b, func(b *testing.B, cfg target.Config) (target.Conn, string) {
		_, c := testConn(b, cfg)
		return c, targettest.BenchTable(b, c, sbCreate, "")
	})
}

// BenchmarkPointSelectClients is BenchmarkPointSelect with 16 connections, each run by
// its own goroutine, as the runner does with -c 16.
func BenchmarkPointSelectClients(b *testing.B) {
	tg, c := testConn(b, target.Config{})
	table := targettest.BenchTable(b, c, sbCreate, "")
	targettest.PointSelectClients(b, 16, table, func() target.Conn { return connect(b, tg) })
}
