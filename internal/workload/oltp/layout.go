package oltp

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

var engineName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// SetLayout takes sysbench prepare's table options: --auto-inc, --secondary,
// --create-secondary and --mysql-storage-engine.
func (w *oltpWorkload) SetLayout(l workload.Layout, d *target.Dialect) error {
	switch {
	case l.FillFactor != 0, l.Unlogged, l.Partitions != 0, l.PartitionMethod != "", l.ForeignKeys:
		return fmt.Errorf("--fillfactor, --unlogged-tables, --partitions, --partition-method and --foreign-keys are pgbench's (tpcb workloads); %s takes --auto-inc, --secondary, --create-secondary and --mysql-storage-engine", w.Name())
	case l.Engine != "" && !d.TableEngine:
		return fmt.Errorf("--mysql-storage-engine is for MySQL and MariaDB targets, not %s: leave it out", d.Name)
	case l.Engine != "" && !engineName.MatchString(l.Engine):
		return fmt.Errorf("--mysql-storage-engine %q is not an engine name (e.g. InnoDB, MyISAM, RocksDB)", l.Engine)
	case l.Secondary && d.RowidSerial && (l.AutoInc == nil || *l.AutoInc):
		return fmt.Errorf("--secondary on SQLite needs --auto-inc=off: an auto-increment column is SQLite's primary key")
	}
	if (l.AutoInc != nil && !*l.AutoInc) && w.s.name == "oltp_insert" {
		return fmt.Errorf("oltp_insert inserts with the auto-increment: prepare it with --auto-inc on")
	}
	w.lay, w.autoIncKey = l, d.AutoIncKey
	return nil
}

func (w *oltpWorkload) autoInc() bool { return w.lay.AutoInc == nil || *w.lay.AutoInc }

// layoutTable applies the layout to sbtestN's definition: a plain id without
// --auto-inc, an index on id instead of the primary key with --secondary, no index on
// k without --create-secondary.
func (w *oltpWorkload) layoutTable(tb target.Table) target.Table {
	if !w.autoInc() {
		tb.Columns[0] = target.Column{Name: "id", Type: "int", NotNull: true}
	}
	if w.lay.CreateSecondary != nil && !*w.lay.CreateSecondary {
		tb.Indexes = nil
	}
	if w.lay.Secondary {
		tb.PrimaryKey = nil
	}
	if w.lay.Secondary && !w.inlineKey() {
		tb.Indexes = append(tb.Indexes, target.Index{Name: "xid_" + strings.TrimPrefix(tb.Name, "sbtest"), Columns: []string{"id"}})
	}
	return tb
}

// createSQL renders CREATE TABLE with the storage engine, and on MySQL the index on
// an auto-increment id inline (MySQL requires an auto-increment column to be a key).
func (w *oltpWorkload) createSQL(d *target.Dialect, tb target.Table) (string, error) {
	dd := *d
	if w.lay.Engine != "" && dd.TableEngine {
		dd.TableOptions = " ENGINE=" + w.lay.Engine
	}
	sql, err := dd.CreateTable(tb, false)
	if err != nil {
		return "", err
	}
	if w.inlineKey() {
		sql = strings.TrimSuffix(sql, ")"+dd.TableOptions) + ", KEY xid_" + strings.TrimPrefix(tb.Name, "sbtest") + " (id))" + dd.TableOptions
	}
	return sql, nil
}

// inlineKey: the index on id goes in CREATE TABLE (MySQL, --secondary with the
// auto-increment).
func (w *oltpWorkload) inlineKey() bool { return w.lay.Secondary && w.autoInc() && w.autoIncKey }
