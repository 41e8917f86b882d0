// Package tpcc is a TPC-C-like workload: the nine tables and the data of the TPC-C
// specification (clauses 1 and 4.3), its five transactions (clause 2) in the standard
// mix, and its consistency conditions (clause 3.3.2) as a check of the data. It is not
// the audited benchmark: no terminals' keying and think times by default, no pricing,
// no durability or ACID tests (see docs/tpcc.md).
package tpcc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// Transaction types, in the order of TxnTypes. A New-Order that the spec has roll
// back (1%, an unused item number, clause 2.4.1.4) is drawn as its own type, so its
// count and latency are kept apart from the committed ones that make NOPM.
const (
	txnNewOrder = iota
	txnPayment
	txnOrderStatus
	txnDelivery
	txnStockLevel
	txnNewOrderRollback
	numTxn
)

var txnNames = [numTxn]string{"new-order", "payment", "order-status", "delivery", "stock-level", "new-order-rollback"}

// txnNameList names the transaction types by index.
func txnNameList() []string { return txnNames[:] }

// defaultMix is the standard mix in percent (clause 5.2.3's minimums, the rest New-Order).
const defaultMix = "45,43,4,4,4"

// Spec is the tpcc workload's spec.
func Spec() *workload.Spec {
	return &workload.Spec{
		Name:        "tpcc",
		Description: "TPC-C-like: nine tables scaled by warehouses, New-Order, Payment, Order-Status, Delivery and Stock-Level in the standard mix; NOPM; `fathom check-data` checks clause 3.3.2's consistency (not an audited TPC-C)",
		Options: []workload.Option{
			{Name: "warehouses", Help: "warehouses (prepare: default 1; run: detected from the warehouse table when not given, may be fewer than prepared)"},
			{Name: "mix", Default: defaultMix, Help: "percentages of new-order, payment, order-status, delivery and stock-level (must add up to 100)"},
			{Name: "all_warehouses", Default: "off", Help: "on: each transaction picks its home warehouse at random (HammerDB's 'use all warehouses'); off: client i keeps warehouse i mod W + 1"},
			{Name: "keying", Default: "off", Help: "on: the spec's keying and think times before and after each transaction, 10 terminals per warehouse (client i at warehouse i/10 mod W + 1; give -c 10*W): NOPM is capped near 12.86 per warehouse; off: back to back"},
			{Name: "loaders", Default: "4", Help: "prepare: connections loading warehouses in parallel (1 on SQLite)"},
		},
		New: func(p workload.Params) (workload.Workload, error) { return newWorkload(p) },
	}
}

// tpccWorkload is a configured tpcc workload.
type tpccWorkload struct {
	warehouses int64 // 0 until given or detected
	given      bool
	mix        [5]int // percent, new-order first
	allWH      bool
	keying     bool
	loaders    int
	opts       map[string]string
	layout     workload.Layout
	dialect    string // set by Setup: postgres, mysql or sqlite
	isolation  string // set by Setup: the server's default isolation level
}

// newWorkload resolves the options.
func newWorkload(p workload.Params) (*tpccWorkload, error) {
	opts, err := Spec().Resolve(p)
	if err != nil {
		return nil, err
	}
	w := &tpccWorkload{opts: opts}
	if strings.TrimSpace(opts["warehouses"]) != "" {
		if w.warehouses, err = workload.Int(opts, "warehouses", 1, maxWarehouses); err != nil {
			return nil, err
		}
		w.given = true
	}
	if w.mix, err = parseMix(opts["mix"]); err != nil {
		return nil, err
	}
	if w.allWH, err = workload.Bool(opts, "all_warehouses"); err != nil {
		return nil, err
	}
	if w.keying, err = workload.Bool(opts, "keying"); err != nil {
		return nil, err
	}
	if w.keying && w.allWH {
		return nil, fmt.Errorf("options keying and all_warehouses: a terminal of the spec keeps its home warehouse; leave all_warehouses off with keying on")
	}
	n, err := workload.Int(opts, "loaders", 1, 64)
	if err != nil {
		return nil, err
	}
	w.loaders = int(n)
	return w, nil
}

func parseMix(s string) ([5]int, error) {
	var m [5]int
	parts := strings.Split(s, ",")
	if len(parts) != 5 {
		return m, fmt.Errorf("option mix: %q: give five percentages, new-order,payment,order-status,delivery,stock-level (e.g. %s)", s, defaultMix)
	}
	sum := 0
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 0 || v > 100 {
			return m, fmt.Errorf("option mix: %q is not a percentage from 0 to 100 (e.g. %s)", p, defaultMix)
		}
		m[i] = v
		sum += v
	}
	if sum != 100 {
		return m, fmt.Errorf("option mix: %q adds up to %d, not 100 (e.g. %s)", s, sum, defaultMix)
	}
	return m, nil
}

// Name is "tpcc".
func (w *tpccWorkload) Name() string { return "tpcc" }

// Tables names the nine tables (the prepare marker's keys).
func (w *tpccWorkload) Tables() []string { return slices.Clone(tableNames) }

// warehousesInEffect is the number in effect: given, detected by Setup, or 0.
func (w *tpccWorkload) warehousesInEffect() int64 { return w.warehouses }

// Options reports every option, the warehouses as detected, and, after Setup, the
// isolation level the transactions run at (the server's default, as HammerDB and
// go-tpc leave it).
func (w *tpccWorkload) Options() map[string]string {
	out := map[string]string{}
	for k, v := range w.opts {
		out[k] = v
	}
	if w.warehouses > 0 {
		out["warehouses"] = strconv.FormatInt(w.warehouses, 10)
	}
	if w.isolation != "" {
		out["isolation"] = w.isolation
	}
	if w.keying && w.warehouses > 0 {
		per := ceilingPerTerminal(w.mix) * terminalsPerWarehouse
		out["keying_ceiling"] = fmt.Sprintf("%.2f New-Orders per minute per warehouse of %d terminals (NOPM %.2f), %.1f for %d warehouses",
			per, terminalsPerWarehouse, per*(1-rollbackPct/100.0), per*float64(w.warehouses), w.warehouses)
	}
	return out
}

// Conversational is true: a TPC-C transaction is about fifteen round trips, which
// the runner serves best through Go's network poller (workload.Conversational).
func (w *tpccWorkload) Conversational() bool { return true }

// TxnTypes names the six transaction types (see TxnNewOrderRollback).
func (w *tpccWorkload) TxnTypes() []string { return txnNameList() }

// Cleanup drops the nine tables, the referencing ones first.
func (w *tpccWorkload) Cleanup(ctx context.Context, conn target.Conn) error {
	var d target.Dialect
	for _, name := range []string{tOrderLine, tNewOrder, tHistory, tOrders, tCustomer, tStock, tDistrict, tWarehouse, tItem} {
		if err := conn.Exec(ctx, d.DropTable(name)); err != nil {
			return fmt.Errorf("dropping %s: %w", name, err)
		}
	}
	return nil
}

// Setup checks that the nine tables exist, reads the number of warehouses and which
// database it talks to, and the isolation level.
func (w *tpccWorkload) Setup(ctx context.Context, conn target.Conn) error {
	var missing []string
	for _, name := range tableNames {
		ok, err := tableExists(ctx, conn, name)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s (prepare with: fathom prepare -w tpcc --warehouses N)", workload.ErrNotPrepared, strings.Join(missing, ", "))
	}
	n, err := countWarehouses(ctx, conn)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: %s is empty", workload.ErrNotPrepared, tWarehouse)
	}
	if w.given && w.warehouses > n {
		return fmt.Errorf("%w: option warehouses: %d is more than the %d prepared; prepare again with --warehouses %d or leave --warehouses out", workload.ErrMismatch, w.warehouses, n, w.warehouses)
	}
	if !w.given {
		w.warehouses = n
	}
	if w.dialect, err = detectDialect(ctx, conn); err != nil {
		return err
	}
	w.isolation = isolation(ctx, conn, w.dialect)
	return nil
}

func countWarehouses(ctx context.Context, conn target.Conn) (int64, error) {
	rows, err := conn.Query(ctx, "SELECT count(*) FROM "+tWarehouse)
	if err != nil {
		return 0, fmt.Errorf("counting warehouses: %w", err)
	}
	return oneInt(rows)
}

// isolation names the isolation level a new transaction gets; "" if it cannot be read.
func isolation(ctx context.Context, conn target.Conn, dialect string) string {
	var q string
	switch dialect {
	case "postgres":
		q = "SHOW transaction_isolation"
	case "mysql":
		q = "SELECT @@transaction_isolation"
	case "sqlite":
		return "serializable (SQLite: one writer at a time)"
	}
	rows, err := conn.Query(ctx, q)
	if err != nil && dialect == "mysql" {
		rows, err = conn.Query(ctx, "SELECT @@tx_isolation") // MySQL before 5.7.20
	}
	if err != nil || len(rows) != 1 || len(rows[0]) != 1 {
		return ""
	}
	return strings.ToLower(strings.ReplaceAll(rows[0][0], "-", " ")) + " (the server's default)"
}

// tableExists probes a table with a query that reads no rows (Setup has no Dialect).
func tableExists(ctx context.Context, conn target.Conn, name string) (bool, error) {
	_, err := conn.Query(ctx, "SELECT 1 FROM "+name+" WHERE 1 = 0")
	if err == nil {
		return true, nil
	}
	switch target.ClassOf(err) {
	case target.ClassUndefined, target.ClassOther:
		return false, nil
	}
	return false, fmt.Errorf("checking table %s: %w", name, err)
}

// detectDialect finds which kind of server conn talks to: version() answers on
// PostgreSQL and MySQL/MariaDB, sqlite_version() only on SQLite.
func detectDialect(ctx context.Context, conn target.Conn) (string, error) {
	rows, err := conn.Query(ctx, "SELECT version()")
	if err == nil && len(rows) == 1 && len(rows[0]) == 1 {
		if strings.Contains(strings.ToLower(rows[0][0]), "postgres") {
			return "postgres", nil
		}
		return "mysql", nil
	}
	if err != nil {
		switch target.ClassOf(err) {
		case target.ClassConnection, target.ClassCanceled, target.ClassTimeout, target.ClassAuth:
			return "", err
		}
	}
	if _, err2 := conn.Query(ctx, "SELECT sqlite_version()"); err2 == nil {
		return "sqlite", nil
	}
	return "", errors.New("cannot tell whether the target is PostgreSQL, MySQL or SQLite")
}

func oneInt(rows [][]string) (int64, error) {
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, errors.New("expected one value")
	}
	v := strings.TrimSpace(rows[0][0])
	if v == "" {
		return 0, nil // NULL
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a whole number: %q", v)
	}
	return n, nil
}

// SetLayout takes the table options that apply: fill factor (PostgreSQL), foreign
// keys (not SQLite), the storage engine (MySQL).
func (w *tpccWorkload) SetLayout(l workload.Layout, d *target.Dialect) error {
	switch {
	case l.AutoInc != nil, l.Secondary, l.CreateSecondary != nil:
		return fmt.Errorf("--auto-inc, --secondary and --create-secondary are sysbench's (oltp workloads); tpcc takes --fillfactor, --foreign-keys and --mysql-storage-engine")
	case l.Unlogged:
		return fmt.Errorf("--unlogged-tables is not supported by tpcc; leave it out")
	case l.Partitions < 0:
		return fmt.Errorf("--partitions %d: give 0 (none) or more", l.Partitions)
	case l.PartitionMethod != "" && l.Partitions == 0:
		return fmt.Errorf("--partition-method %s needs --partitions N", l.PartitionMethod)
	case l.PartitionMethod != "" && l.PartitionMethod != "range" && l.PartitionMethod != "hash":
		return fmt.Errorf("--partition-method %q: give range or hash", l.PartitionMethod)
	case l.Partitions > 0 && !d.TableStorage && !d.TableEngine:
		return fmt.Errorf("--partitions: %s has no table partitioning; leave it out (PostgreSQL and MySQL partition tpcc's tables by warehouse)", d.Name)
	case l.Partitions > 0 && l.ForeignKeys && d.TableEngine:
		return fmt.Errorf("--partitions with --foreign-keys: MySQL's partitioned tables take no foreign keys; leave one of them out")
	case l.FillFactor != 0 && (l.FillFactor < 10 || l.FillFactor > 100):
		return fmt.Errorf("--fillfactor %d: give 10 to 100", l.FillFactor)
	case l.FillFactor != 0 && !d.TableStorage:
		return fmt.Errorf("--fillfactor is a PostgreSQL table option; %s has no equivalent: leave it out", d.Name)
	case l.Engine != "" && !d.TableEngine:
		return fmt.Errorf("--mysql-storage-engine is for MySQL/MariaDB targets; leave it out for %s", d.Name)
	case d.NoAddForeignKey && l.ForeignKeys:
		return fmt.Errorf("--foreign-keys: SQLite cannot add a foreign key to a loaded table; leave it out")
	}
	w.layout = l
	return nil
}
