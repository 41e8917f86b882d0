package tpcb

import (
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// foreignKeys are the constraints pgbench -i --foreign-keys adds after loading.
var foreignKeys = []string{
	"ALTER TABLE pgbench_tellers ADD CONSTRAINT pgbench_tellers_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches (bid)",
	"ALTER TABLE pgbench_accounts ADD CONSTRAINT pgbench_accounts_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches (bid)",
	"ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches (bid)",
	"ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_tid_fkey FOREIGN KEY (tid) REFERENCES pgbench_tellers (tid)",
	"ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_aid_fkey FOREIGN KEY (aid) REFERENCES pgbench_accounts (aid)",
}

// SetLayout takes pgbench -i's table options. Fill factor, unlogged tables and
// partitions are PostgreSQL's; foreign keys need ALTER TABLE … ADD CONSTRAINT, which
// SQLite lacks.
func (w *Workload) SetLayout(l workload.Layout, d *target.Dialect) error {
	switch {
	case l.AutoInc != nil, l.Secondary, l.CreateSecondary != nil, l.Engine != "":
		return fmt.Errorf("--auto-inc, --secondary, --create-secondary and --mysql-storage-engine are sysbench's (oltp workloads); %s takes --fillfactor, --unlogged-tables, --partitions, --partition-method and --foreign-keys", w.Name())
	case l.FillFactor != 0 && (l.FillFactor < 10 || l.FillFactor > 100):
		return fmt.Errorf("--fillfactor %d: give 10 to 100, as pgbench does", l.FillFactor)
	case l.Partitions < 0:
		return fmt.Errorf("--partitions %d: give 0 (none) or more", l.Partitions)
	case l.PartitionMethod != "" && l.Partitions == 0:
		return fmt.Errorf("--partition-method needs --partitions N (as in pgbench)")
	case l.PartitionMethod != "" && l.PartitionMethod != "range" && l.PartitionMethod != "hash":
		return fmt.Errorf("--partition-method %q: use range or hash", l.PartitionMethod)
	case !d.TableStorage && (l.FillFactor != 0 || l.Unlogged || l.Partitions > 0):
		return fmt.Errorf("--fillfactor, --unlogged-tables and --partitions are PostgreSQL table options; %s has no equivalent: leave them out", d.Name)
	case d.NoAddForeignKey && l.ForeignKeys:
		return fmt.Errorf("--foreign-keys: SQLite cannot add a foreign key to a loaded table; leave it out")
	}
	w.layout = l
	return nil
}

// createSQL renders the statements that create tb with the layout: UNLOGGED, the fill
// factor (not on pgbench_history, as pgbench) and pgbench_accounts' partitions, which
// pgbench numbers from 1 and bounds as it does (MINVALUE and MAXVALUE at the ends of
// a range).
func (w *Workload) createSQL(d *target.Dialect, tb target.Table, scale int64) ([]string, error) {
	sql, err := d.CreateTable(tb, false)
	if err != nil {
		return nil, err
	}
	l := w.layout
	parted := tb.Name == accounts && l.Partitions > 0
	with := ""
	if l.FillFactor > 0 && tb.Name != history {
		with = fmt.Sprintf(" WITH (fillfactor=%d)", l.FillFactor)
	}
	unlogged := func(s string) string {
		if l.Unlogged {
			return strings.Replace(s, "CREATE TABLE ", "CREATE UNLOGGED TABLE ", 1)
		}
		return s
	}
	if !parted {
		return []string{unlogged(sql) + with}, nil
	}
	method := l.PartitionMethod
	if method == "" {
		method = "range"
	}
	// The parent is UNLOGGED too, as pgbench makes it (PostgreSQL before 18 accepts
	// it; it is what lets an unlogged table's foreign key reference it).
	out := []string{unlogged(sql) + " PARTITION BY " + strings.ToUpper(method) + " (aid)"}
	n := int64(l.Partitions)
	naccounts := accountsPerScale * scale
	part := (naccounts + n - 1) / n
	for i := int64(1); i <= n; i++ {
		var bounds string
		if method == "hash" {
			bounds = fmt.Sprintf("WITH (MODULUS %d, REMAINDER %d)", n, i-1)
		} else {
			lo, hi := fmt.Sprint((i-1)*part+1), fmt.Sprint(i*part+1)
			if i == 1 {
				lo = "MINVALUE"
			}
			if i == n {
				hi = "MAXVALUE"
			}
			bounds = "FROM (" + lo + ") TO (" + hi + ")"
		}
		out = append(out, unlogged(fmt.Sprintf("CREATE TABLE %s_%d PARTITION OF %s FOR VALUES %s", accounts, i, accounts, bounds))+with)
	}
	return out, nil
}
