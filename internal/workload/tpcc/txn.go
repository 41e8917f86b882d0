package tpcc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// Shares of clause 2: New-Order rolls back 1% of the time and takes an item from a
// remote warehouse for 1% of its lines; Payment pays for a remote customer 15% of the
// time; Payment and Order-Status find the customer by last name 60% of the time.
const (
	rollbackPct   = 1
	remoteLinePct = 1
	remotePayPct  = 15
	byNamePct     = 60
	maxLines      = 15
)

// statements, with '?' placeholders. forUpdate is appended where a row is read and then
// written (not on SQLite, which locks the whole database for a writer).
const (
	sqlNOCustomer = "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"
	sqlNODistrict = "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ?"
	sqlNODistUpd  = "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?"
	sqlNOOrder    = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)"
	sqlNONewOrder = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"
	// New-Order reads its lines' items in one statement and their stock rows in
	// another, as go-tpc does: maxLines placeholders each, the unused ones repeating
	// the first line's item (a repeated value does not change an IN list), so that
	// one prepared statement serves every order size. Stock rows are read, and so
	// locked, in (warehouse, item) order.
	sqlNOItems     = "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN (%s)"
	sqlNOStocks    = "SELECT s_w_id, s_i_id, s_quantity, s_data, s_dist_%02d FROM stock WHERE (s_w_id, s_i_id) IN (%s) ORDER BY s_w_id, s_i_id"
	sqlNOStockUpd  = "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?"
	sqlNOLines     = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES "
	sqlNOLineTuple = "(?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"
	lineArgs       = 9
	sqlPayWHUpd    = "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"
	// Payment reads the warehouse's and the district's name and address in one query.
	sqlPayWHDist    = "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip, d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM warehouse, district WHERE w_id = ? AND d_w_id = w_id AND d_id = ?"
	sqlPayDistUpd   = "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"
	sqlByName       = "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"
	sqlPayCustomer  = "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlPayCData     = "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlPayCustUpd   = "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlPayCustUpdBC = "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlPayHistory   = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
	sqlOSCustomer   = "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlOSOrder      = "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1"
	sqlOSLines      = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
	sqlDlvNewOrder  = "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1"
	// Delivery finds each district's oldest order, then handles the (up to) ten orders
	// together, as go-tpc does: ten (warehouse, district, order) triples, the unused ones
	// repeating the first.
	sqlDlvDelete   = "DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN (%s)"
	sqlDlvOrder    = "SELECT o_d_id, o_c_id FROM orders WHERE (o_w_id, o_d_id, o_id) IN (%s)"
	sqlDlvOrderUpd = "UPDATE orders SET o_carrier_id = ? WHERE (o_w_id, o_d_id, o_id) IN (%s)"
	sqlDlvLinesUpd = "UPDATE order_line SET ol_delivery_d = ? WHERE (ol_w_id, ol_d_id, ol_o_id) IN (%s)"
	sqlDlvSum      = "SELECT ol_d_id, sum(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN (%s) GROUP BY ol_d_id ORDER BY ol_d_id"
	sqlDlvCustUpd  = "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlSLDistrict  = "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"
	sqlSLCount     = "SELECT count(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?"
)

const forUpdate = " FOR UPDATE"

// stmts are one worker's prepared statements.
type stmts struct {
	noCustomer, noDistrict, noDistUpd, noOrder, noNewOrder, noItems, noStockUpd target.Stmt
	noStocks                                                                    [districtsPerWarehouse]target.Stmt
	// noLines[n] inserts n order lines in one statement (n from 5 to 15).
	noLines                                                                        [maxLines + 1]target.Stmt
	payWHUpd, payWHDist, payDistUpd, byName                                        target.Stmt
	payCustomer, payCData, payCustUpd, payCustUpdBC, payHistory                    target.Stmt
	osCustomer, osOrder, osLines                                                   target.Stmt
	dlvNewOrder, dlvDelete, dlvOrder, dlvOrderUpd, dlvLinesUpd, dlvSum, dlvCustUpd target.Stmt
	slDistrict, slCount                                                            target.Stmt
}

// line is one order line of a New-Order.
type line struct {
	item, supplyW, qty int64
}

// worker runs the five transactions for one client.
type worker struct {
	w        *tpccWorkload
	r        *gen.Rand
	c        constants
	nw       int64
	home     int64
	mix      [5]int // cumulative percentages
	sqlite   bool
	conn     target.Conn
	pipe     target.Pipeliner // PostgreSQL's pipeline mode, nil elsewhere
	pl       target.Pipeline  // the open pipeline of a batch (nil: statements run one by one)
	s        stmts
	res      target.Result
	all      target.Result // multi-row reads: every row kept
	statemts int

	// The drawn transaction's inputs (clause 2.x.1), kept for retries.
	typ        int
	prev       int   // keying: the previous transaction's type (think time), -1 before the first
	slDistrict int64 // keying: the terminal's district for Stock-Level (clause 2.8.1.1)
	wid, did   int64
	cwid, cdid int64 // Payment's customer warehouse and district
	cid        int64
	byName     bool
	last       []byte
	lines      []line
	allLocal   bool
	amount     int64 // Payment's h_amount in cents
	carrier    int64
	threshold  int64

	args [2*maxLines + 2]target.Value
	// Delivery's orders by district (0: none to deliver) and their customers.
	dlvOrder [districtsPerWarehouse]int64
	dlvCust  [districtsPerWarehouse]int64
	// New-Order's items and stock rows as read, by line, and each stock row's
	// quantity as the order's earlier lines left it (an item may come twice).
	price [maxLines]int64
	stock [maxLines]int // the line's row in all.First (stock read), -1 before
	qty   [maxLines]int64
	// New-Order's lines, inserted together: their arguments and their text.
	lineArgs [maxLines * lineArgs]target.Value
	lineText []byte
	buf      []byte // decimals and c_data
	cdat     []byte
	name     []byte
}

// NewWorker returns the state of client id. Its home warehouse is id mod W + 1
// (round-robin over the clients) unless all_warehouses is on; the run's NURand C
// values come from the seed alone, so every client uses the same ones.
func (w *tpccWorkload) NewWorker(id int, seed uint64) workload.Worker {
	nw := w.warehouses
	if nw == 0 {
		nw = 1
	}
	k := &worker{
		w:      w,
		r:      gen.New(seed, uint64(id)),
		c:      runConstants(seed),
		nw:     nw,
		home:   int64(id)%nw + 1,
		prev:   -1,
		sqlite: w.dialect == "sqlite",
		lines:  make([]line, 0, maxLines),
		all:    target.Result{Keep: true, KeepAll: true},
		last:   make([]byte, 0, 16),
		buf:    make([]byte, 0, 64),
		cdat:   make([]byte, 0, 600),
		name:   make([]byte, 0, 32),
		// 24 characters of s_dist_xx and at most 8 of amount ("10000.00") a line.
		lineText: make([]byte, 0, maxLines*64),
	}
	if w.keying {
		// Ten terminals per warehouse, each with a district of its own for Stock-Level.
		k.home = int64(id/terminalsPerWarehouse)%nw + 1
		k.slDistrict = int64(id%terminalsPerWarehouse) + 1
	}
	sum := 0
	for i, p := range w.mix {
		sum += p
		k.mix[i] = sum
	}
	return k
}

// Bind prepares the statements on conn.
func (k *worker) Bind(ctx context.Context, conn target.Conn) error {
	k.conn = conn
	k.pipe, _ = conn.(target.Pipeliner)
	fu := forUpdate
	if k.sqlite {
		fu = ""
	}
	s := &k.s
	list := []struct {
		dst *target.Stmt
		sql string
	}{
		{&s.noCustomer, sqlNOCustomer}, {&s.noDistrict, sqlNODistrict + fu}, {&s.noDistUpd, sqlNODistUpd},
		{&s.noOrder, sqlNOOrder}, {&s.noNewOrder, sqlNONewOrder}, {&s.noItems, itemsSQL()}, {&s.noStockUpd, sqlNOStockUpd},
		{&s.payWHUpd, sqlPayWHUpd}, {&s.payWHDist, sqlPayWHDist}, {&s.payDistUpd, sqlPayDistUpd},
		{&s.byName, sqlByName}, {&s.payCustomer, sqlPayCustomer + fu},
		{&s.payCData, sqlPayCData}, {&s.payCustUpd, sqlPayCustUpd}, {&s.payCustUpdBC, sqlPayCustUpdBC}, {&s.payHistory, sqlPayHistory},
		{&s.osCustomer, sqlOSCustomer}, {&s.osOrder, sqlOSOrder}, {&s.osLines, sqlOSLines},
		{&s.dlvNewOrder, sqlDlvNewOrder + fu}, {&s.dlvDelete, k.triples(sqlDlvDelete)}, {&s.dlvOrder, k.triples(sqlDlvOrder)},
		{&s.dlvOrderUpd, k.triples(sqlDlvOrderUpd)}, {&s.dlvLinesUpd, k.triples(sqlDlvLinesUpd)}, {&s.dlvSum, k.triples(sqlDlvSum)},
		{&s.dlvCustUpd, sqlDlvCustUpd},
		{&s.slDistrict, sqlSLDistrict}, {&s.slCount, sqlSLCount},
	}
	for n := 5; n <= maxLines; n++ {
		list = append(list, struct {
			dst *target.Stmt
			sql string
		}{&s.noLines[n], sqlNOLines + strings.TrimSuffix(strings.Repeat(sqlNOLineTuple+", ", n), ", ")})
	}
	for d := range districtsPerWarehouse {
		list = append(list, struct {
			dst *target.Stmt
			sql string
		}{&s.noStocks[d], stocksSQL(d+1, k.sqlite) + fu})
	}
	for _, l := range list {
		st, err := conn.Prepare(ctx, l.sql)
		if err != nil {
			return fmt.Errorf("preparing %q: %w", l.sql, err)
		}
		*l.dst = st
	}
	return nil
}

// otherWarehouse draws a warehouse other than wid (wid itself with one warehouse).
func (k *worker) otherWarehouse(wid int64) int64 {
	if k.nw == 1 {
		return wid
	}
	o := k.r.Uniform(1, k.nw-1)
	if o >= wid {
		o++
	}
	return o
}

// customer draws a customer by last name (byNamePct) or by id.
func (k *worker) customer() {
	k.byName = k.r.Uniform(1, 100) <= byNamePct
	if k.byName {
		k.last = lastName(k.last[:0], nuRand(k.r, aLast, k.c.Last, 0, 999))
		k.cid = 0
	} else {
		k.cid = nuRand(k.r, aCID, k.c.CID, 1, customersPerDistrict)
	}
}

// Next draws the transaction type from the mix and its inputs by clause 2.x.1.
func (k *worker) Next() int {
	p := int(k.r.Uniform(1, 100))
	k.typ = 0
	for k.typ < 4 && p > k.mix[k.typ] {
		k.typ++
	}
	k.wid = k.home
	if k.w.allWH {
		k.wid = k.r.Uniform(1, k.nw)
	}
	k.did = k.r.Uniform(1, districtsPerWarehouse)
	switch k.typ {
	case txnNewOrder:
		k.cid = nuRand(k.r, aCID, k.c.CID, 1, customersPerDistrict)
		n := int(k.r.Uniform(5, 15))
		rbk := k.r.Uniform(1, 100) <= rollbackPct
		k.lines = k.lines[:0]
		k.allLocal = true
		for i := range n {
			l := line{item: nuRand(k.r, aItem, k.c.Item, 1, items), supplyW: k.wid, qty: k.r.Uniform(1, 10)}
			if rbk && i == n-1 {
				l.item = items + 1 // unused: the transaction rolls back
			}
			if k.nw > 1 && k.r.Uniform(1, 100) <= remoteLinePct {
				l.supplyW = k.otherWarehouse(k.wid)
				k.allLocal = false
			}
			k.lines = append(k.lines, l)
		}
		// Stock rows are locked in one order (warehouse, item) by every client, so
		// New-Orders do not deadlock on each other; the unused item stays last.
		slices.SortFunc(k.lines, func(a, b line) int {
			if ua, ub := a.item > items, b.item > items; ua != ub {
				if ua {
					return 1
				}
				return -1
			}
			if a.supplyW != b.supplyW {
				return int(a.supplyW - b.supplyW)
			}
			return int(a.item - b.item)
		})
		if rbk {
			return txnNewOrderRollback
		}
		return txnNewOrder
	case txnPayment:
		k.cwid, k.cdid = k.wid, k.did
		if k.nw > 1 && k.r.Uniform(1, 100) <= remotePayPct {
			k.cwid = k.otherWarehouse(k.wid)
			k.cdid = k.r.Uniform(1, districtsPerWarehouse)
		}
		k.customer()
		k.amount = k.r.Uniform(100, 500_000)
	case txnOrderStatus:
		k.cwid, k.cdid = k.wid, k.did
		k.customer()
	case txnDelivery:
		k.carrier = k.r.Uniform(1, 10)
	case txnStockLevel:
		k.threshold = k.r.Uniform(10, 20)
		if k.slDistrict > 0 {
			k.did = k.slDistrict
		}
	}
	return k.typ
}

// Do runs the drawn transaction and returns the statements it sent.
func (k *worker) Do(ctx context.Context) (int, error) {
	k.statemts = 1
	if err := k.conn.Begin(ctx); err != nil {
		return k.statemts, err
	}
	var err error
	commit := true
	switch k.typ {
	case txnNewOrder:
		commit, err = k.newOrder(ctx)
	case txnPayment:
		err = k.payment(ctx)
	case txnOrderStatus:
		err = k.orderStatus(ctx)
	case txnDelivery:
		err = k.delivery(ctx)
	case txnStockLevel:
		err = k.stockLevel(ctx)
	}
	if err != nil {
		return k.statemts, err
	}
	k.statemts++
	if !commit {
		return k.statemts, k.conn.Rollback(ctx)
	}
	return k.statemts, k.conn.Commit(ctx)
}

// run executes s with args; with keep, the first row is kept in k.res.First.
func (k *worker) run(ctx context.Context, s target.Stmt, keep bool, args ...target.Value) error {
	k.statemts++
	k.res.Keep = keep
	n := copy(k.args[:], args)
	return s.Run(ctx, k.args[:n], &k.res)
}

// row checks that the last statement returned a row with n columns.
func (k *worker) row(what string, n int) error {
	if k.res.Rows == 0 || len(k.res.First) < n {
		return &workload.AbortError{Err: fmt.Errorf("tpcc: %s: no row (are the tables prepared by `fathom prepare -w tpcc`, and not changed since?)", what)}
	}
	return nil
}

func i64(v int64) target.Value { return target.Int64(v) }

// newOrder is clause 2.4.2. It returns false when the transaction must roll back (an
// unused item, clause 2.4.2.3).
func (k *worker) newOrder(ctx context.Context) (bool, error) {
	w, d := i64(k.wid), i64(k.did)
	if err := k.run(ctx, k.s.noCustomer, true, w, d, i64(k.cid)); err != nil {
		return false, err
	}
	if err := k.row("customer", 4); err != nil {
		return false, err
	}
	if err := k.run(ctx, k.s.noDistrict, true, w, d); err != nil {
		return false, err
	}
	if err := k.row("district", 2); err != nil {
		return false, err
	}
	oid := parseInt(k.res.First[0].Text)
	local := int64(0)
	if k.allLocal {
		local = 1
	}
	o := i64(oid)
	// The district's update and the order's two rows return nothing that the
	// transaction needs: on PostgreSQL they go in one round trip (a pipeline).
	if err := k.startBatch(ctx); err != nil {
		return false, err
	}
	if err := k.exec(ctx, k.s.noDistUpd, i64(oid+1), w, d); err != nil {
		return false, err
	}
	if err := k.exec(ctx, k.s.noOrder, o, d, w, i64(k.cid), target.Time(time.Now()), i64(int64(len(k.lines))), i64(local)); err != nil {
		return false, err
	}
	if err := k.exec(ctx, k.s.noNewOrder, o, d, w); err != nil {
		return false, err
	}
	if err := k.endBatch(ctx); err != nil {
		return false, err
	}
	rollback, err := k.readItems(ctx)
	if err != nil || rollback {
		return false, err
	}
	if err := k.readStocks(ctx); err != nil {
		return false, err
	}
	k.lineText = k.lineText[:0]
	// The stock updates and the lines' INSERT, one round trip on PostgreSQL.
	if err := k.startBatch(ctx); err != nil {
		return false, err
	}
	for n, l := range k.lines {
		row := k.all.First[k.stock[n]*stockCols:]
		q := k.qty[k.stock[n]]
		if q >= l.qty+10 {
			q -= l.qty
		} else {
			q = q - l.qty + 91
		}
		k.qty[k.stock[n]] = q
		remote := int64(0)
		if l.supplyW != k.wid {
			remote = 1
		}
		// The line's s_dist_xx and amount, kept in lineText (sized so that it never
		// moves) until the lines are inserted together.
		start := len(k.lineText)
		k.lineText = append(k.lineText, row[4].Text...)
		nd := len(k.lineText)
		k.lineText = appendCents(k.lineText, l.qty*k.price[n])
		a := k.lineArgs[n*lineArgs : (n+1)*lineArgs]
		a[0], a[1], a[2], a[3], a[4], a[5], a[6] = o, d, w, i64(int64(n+1)), i64(l.item), i64(l.supplyW), i64(l.qty)
		a[7], a[8] = target.Text(k.lineText[nd:len(k.lineText):len(k.lineText)]), target.Text(k.lineText[start:nd:nd])
		if err := k.exec(ctx, k.s.noStockUpd, i64(q), i64(l.qty), i64(remote), i64(l.item), i64(l.supplyW)); err != nil {
			return false, err
		}
	}
	// The order lines in one INSERT, as go-tpc and HammerDB's procedures send them.
	if err := k.execArgs(ctx, k.s.noLines[len(k.lines)], k.lineArgs[:len(k.lines)*lineArgs]); err != nil {
		return false, err
	}
	return true, k.endBatch(ctx)
}

// startBatch begins statements whose results the transaction does not read (writes):
// on PostgreSQL they are queued in pipeline mode and sent together by endBatch, one
// round trip; elsewhere exec runs each at once. The server runs them in the same
// order either way, inside the transaction.
func (k *worker) startBatch(ctx context.Context) error {
	if k.pipe == nil {
		return nil
	}
	pl, err := k.pipe.StartPipeline(ctx)
	if err != nil {
		return err
	}
	k.pl = pl
	return nil
}

// exec runs s with args, or queues it in the open batch (the arguments are copied).
func (k *worker) exec(ctx context.Context, s target.Stmt, args ...target.Value) error {
	n := copy(k.args[:], args) // args stays on the caller's stack
	return k.execArgs(ctx, s, k.args[:n])
}

// execArgs is exec with arguments that the worker owns.
func (k *worker) execArgs(ctx context.Context, s target.Stmt, args []target.Value) error {
	if k.pl == nil {
		k.statemts++
		k.res.Keep = false
		return s.Run(ctx, args, &k.res)
	}
	k.statemts++
	if err := k.pl.Send(s, args); err != nil {
		k.pl.Abandon()
		k.pl = nil
		return err
	}
	return nil
}

// endBatch sends the batch's statements and reads their results: the first failure
// (its class kept, so that a deadlock is retried) is the error.
func (k *worker) endBatch(ctx context.Context) error {
	if k.pl == nil {
		return nil
	}
	pl := k.pl
	k.pl = nil
	_, err := pl.End(ctx)
	return err
}

// findByName sets k.cid to the customer in the middle (rounded up) of those with
// last name k.last in (cw, cd), sorted by first name (clause 2.5.2.2): one query reads
// them all, as the clause's cursor does.
func (k *worker) findByName(ctx context.Context, cw, cd target.Value) error {
	k.statemts++
	k.args[0], k.args[1], k.args[2] = cw, cd, target.Text(k.last)
	if err := k.s.byName.Run(ctx, k.args[:3], &k.all); err != nil {
		return err
	}
	n := k.all.Rows
	if n == 0 || int64(len(k.all.First)) < n {
		return &workload.AbortError{Err: fmt.Errorf("tpcc: no customer named %s in warehouse %d district %d: the data was not loaded by clause 4.3", k.last, cw.Int, cd.Int)}
	}
	k.cid = parseInt(k.all.First[(n-1)/2].Text)
	return nil
}

// payment is clause 2.5.2.
func (k *worker) payment(ctx context.Context) error {
	w, d, cw, cd := i64(k.wid), i64(k.did), i64(k.cwid), i64(k.cdid)
	k.buf = appendCents(k.buf[:0], k.amount)
	amt := target.Text(k.buf)
	// The two year-to-date updates (warehouse first, then district: every Payment
	// locks them in that order), one round trip on PostgreSQL; then their names and
	// addresses in one query.
	if err := k.startBatch(ctx); err != nil {
		return err
	}
	if err := k.exec(ctx, k.s.payWHUpd, amt, w); err != nil {
		return err
	}
	if err := k.exec(ctx, k.s.payDistUpd, amt, w, d); err != nil {
		return err
	}
	if err := k.endBatch(ctx); err != nil {
		return err
	}
	if err := k.run(ctx, k.s.payWHDist, true, w, d); err != nil {
		return err
	}
	if err := k.row("warehouse and district", 12); err != nil {
		return err
	}
	k.name = append(append(append(k.name[:0], k.res.First[0].Text...), "    "...), k.res.First[6].Text...)
	if k.byName {
		if err := k.findByName(ctx, cw, cd); err != nil {
			return err
		}
	}
	c := i64(k.cid)
	if err := k.run(ctx, k.s.payCustomer, true, cw, cd, c); err != nil {
		return err
	}
	if err := k.row("customer", 14); err != nil {
		return err
	}
	if len(k.name) > 24 {
		k.name = k.name[:24]
	}
	bc := string(k.res.First[9].Text) == "BC"
	if bc {
		if err := k.run(ctx, k.s.payCData, true, cw, cd, c); err != nil {
			return err
		}
		if err := k.row("customer data", 1); err != nil {
			return err
		}
		// The payment's ids and amount go in front of C_DATA, which keeps 500 characters.
		k.cdat = appendUint(k.cdat[:0], k.cid)
		for _, v := range []int64{k.cdid, k.cwid, k.did, k.wid} {
			k.cdat = appendUint(append(k.cdat, ' '), v)
		}
		k.cdat = appendCents(append(k.cdat, ' '), k.amount)
		k.cdat = append(append(k.cdat, ' '), k.res.First[0].Text...)
		if len(k.cdat) > 500 {
			k.cdat = k.cdat[:500]
		}
	}
	// The customer's update and the history row, one round trip on PostgreSQL.
	if err := k.startBatch(ctx); err != nil {
		return err
	}
	var err error
	if bc {
		err = k.exec(ctx, k.s.payCustUpdBC, amt, amt, target.Text(k.cdat), cw, cd, c)
	} else {
		err = k.exec(ctx, k.s.payCustUpd, amt, amt, cw, cd, c)
	}
	if err != nil {
		return err
	}
	if err := k.exec(ctx, k.s.payHistory, c, cd, cw, d, w, target.Time(time.Now()), amt, target.Text(k.name)); err != nil {
		return err
	}
	return k.endBatch(ctx)
}

// orderStatus is clause 2.6.2.
func (k *worker) orderStatus(ctx context.Context) error {
	w, d := i64(k.wid), i64(k.did)
	if k.byName {
		if err := k.findByName(ctx, w, d); err != nil {
			return err
		}
	}
	c := i64(k.cid)
	if err := k.run(ctx, k.s.osCustomer, true, w, d, c); err != nil {
		return err
	}
	if err := k.row("customer", 4); err != nil {
		return err
	}
	if err := k.run(ctx, k.s.osOrder, true, w, d, c); err != nil {
		return err
	}
	if k.res.Rows == 0 {
		return nil // a customer with no order yet: nothing more to show
	}
	oid := parseInt(k.res.First[0].Text)
	return k.run(ctx, k.s.osLines, false, w, d, i64(oid))
}

// delivery is clause 2.7.4, run at once for the ten districts in one transaction (as
// the kits do, without the deferred queue). A district with no undelivered order is
// skipped, as the spec allows. Each district's oldest order is found (and locked) by
// a query of its own; the orders are then delivered together, one statement for each
// step of the clause, and each customer is credited with a statement of its own.
func (k *worker) delivery(ctx context.Context) error {
	w := i64(k.wid)
	n := 0
	for did := int64(1); did <= districtsPerWarehouse; did++ {
		k.dlvOrder[did-1] = 0
		if err := k.run(ctx, k.s.dlvNewOrder, true, w, i64(did)); err != nil {
			return err
		}
		if k.res.Rows > 0 {
			k.dlvOrder[did-1] = parseInt(k.res.First[0].Text)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	// The orders' triples after the statement's first argument (if any) in k.args.
	triples := func(first int) []target.Value {
		a := k.args[first : first+3*districtsPerWarehouse]
		j := 0
		for did, oid := range k.dlvOrder {
			if oid != 0 {
				a[3*j], a[3*j+1], a[3*j+2] = w, i64(int64(did+1)), i64(oid)
				j++
			}
		}
		for ; j < districtsPerWarehouse; j++ {
			copy(a[3*j:3*j+3], a[:3])
		}
		return k.args[:first+3*districtsPerWarehouse]
	}
	k.statemts++
	if err := k.s.dlvDelete.Run(ctx, triples(0), &k.res); err != nil {
		return err
	}
	if k.res.RowsAffected != int64(n) {
		// The rows were read FOR UPDATE (SQLite: one writer at a time): another
		// transaction cannot have taken one, unless the isolation allows it.
		return target.Errorf(target.ClassSerialization, "", "tpcc delivery: %d of %d undelivered orders were gone when deleted", n-int(k.res.RowsAffected), n)
	}
	k.statemts++
	if err := k.s.dlvOrder.Run(ctx, triples(0), &k.all); err != nil {
		return err
	}
	rows := k.all.First
	if k.all.Rows != int64(n) || len(rows) < 2*n {
		return k.row("orders", 2)
	}
	for r := 0; r < n; r++ {
		k.dlvCust[parseInt(rows[2*r].Text)-1] = parseInt(rows[2*r+1].Text)
	}
	// The orders' carrier and their lines' delivery date: one round trip on
	// PostgreSQL (exec copies the arguments, or runs the statement, before k.args
	// is filled again).
	if err := k.startBatch(ctx); err != nil {
		return err
	}
	k.args[0] = i64(k.carrier)
	if err := k.execArgs(ctx, k.s.dlvOrderUpd, triples(1)); err != nil {
		return err
	}
	k.args[0] = target.Time(time.Now())
	if err := k.execArgs(ctx, k.s.dlvLinesUpd, triples(1)); err != nil {
		return err
	}
	if err := k.endBatch(ctx); err != nil {
		return err
	}
	k.statemts++
	if err := k.s.dlvSum.Run(ctx, triples(0), &k.all); err != nil {
		return err
	}
	rows = k.all.First
	if k.all.Rows != int64(n) || len(rows) < 2*n {
		return k.row("order lines", 2)
	}
	// Each customer credited with its order's amount: one round trip on PostgreSQL.
	if err := k.startBatch(ctx); err != nil {
		return err
	}
	for r := 0; r < n; r++ {
		did := parseInt(rows[2*r].Text)
		k.buf = appendCents(k.buf[:0], parseCents(rows[2*r+1].Text))
		if err := k.exec(ctx, k.s.dlvCustUpd, target.Text(k.buf), w, i64(did), i64(k.dlvCust[did-1])); err != nil {
			return err
		}
	}
	return k.endBatch(ctx)
}

// triples fills a statement of Delivery with its ten (warehouse, district, order)
// triples: a row value IN list, from VALUES on SQLite.
func (k *worker) triples(sql string) string {
	list := strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", districtsPerWarehouse), ", ")
	if k.sqlite {
		list = "VALUES " + list
	}
	return fmt.Sprintf(sql, list)
}

// stockLevel is clause 2.8.2: distinct items of the district's last 20 orders whose
// stock is below the threshold.
func (k *worker) stockLevel(ctx context.Context) error {
	w, d := i64(k.wid), i64(k.did)
	if err := k.run(ctx, k.s.slDistrict, true, w, d); err != nil {
		return err
	}
	if err := k.row("district", 1); err != nil {
		return err
	}
	next := parseInt(k.res.First[0].Text)
	return k.run(ctx, k.s.slCount, true, w, d, i64(next), i64(next-20), w, i64(k.threshold))
}

// stockCols are the columns of a New-Order's stock read: s_w_id, s_i_id, s_quantity,
// s_data, s_dist_xx.
const stockCols = 5

// itemsSQL is New-Order's read of its items: maxLines placeholders.
func itemsSQL() string {
	return fmt.Sprintf(sqlNOItems, strings.TrimSuffix(strings.Repeat("?, ", maxLines), ", "))
}

// stocksSQL is New-Order's read of its stock rows for district d: maxLines pairs
// (warehouse, item). SQLite takes a row value IN list only from a subquery: VALUES.
func stocksSQL(d int, sqlite bool) string {
	list := strings.TrimSuffix(strings.Repeat("(?, ?), ", maxLines), ", ")
	if sqlite {
		list = "VALUES " + list
	}
	return fmt.Sprintf(sqlNOStocks, d, list)
}

// readItems reads the order's items in one statement and keeps each line's price. It
// returns true when an item is missing and the transaction must roll back (the 1% with
// an unused item, clause 2.4.2.3).
func (k *worker) readItems(ctx context.Context) (bool, error) {
	a := k.args[:maxLines]
	for i := range a {
		a[i] = i64(k.lines[min(i, len(k.lines)-1)].item)
	}
	k.statemts++
	if err := k.s.noItems.Run(ctx, a, &k.all); err != nil {
		return false, err
	}
	const cols = 4 // i_id, i_price, i_name, i_data
	rows := k.all.First
	if int64(len(rows)) < k.all.Rows*cols {
		return false, k.row("item", cols)
	}
	for n, l := range k.lines {
		found := false
		for r := 0; r < len(rows); r += cols {
			if parseInt(rows[r].Text) == l.item {
				k.price[n], found = parseCents(rows[r+1].Text), true
				break
			}
		}
		if !found {
			if l.item > items {
				return true, nil
			}
			return false, &workload.AbortError{Err: fmt.Errorf("tpcc: item %d: no row (are the tables prepared by `fathom prepare -w tpcc`, and not changed since?)", l.item)}
		}
	}
	return false, nil
}

// readStocks reads, and locks, the order's stock rows in one statement, and finds each
// line's row (k.stock) and its quantity (k.qty).
func (k *worker) readStocks(ctx context.Context) error {
	a := k.args[:2*maxLines]
	for i := range maxLines {
		l := k.lines[min(i, len(k.lines)-1)]
		a[2*i], a[2*i+1] = i64(l.supplyW), i64(l.item)
	}
	k.statemts++
	if err := k.s.noStocks[k.did-1].Run(ctx, a, &k.all); err != nil {
		return err
	}
	rows := k.all.First
	if int64(len(rows)) < k.all.Rows*stockCols {
		return k.row("stock", stockCols)
	}
	for r := 0; r*stockCols < len(rows); r++ {
		k.qty[r] = parseInt(rows[r*stockCols+2].Text)
	}
	for n, l := range k.lines {
		k.stock[n] = -1
		for r := 0; r*stockCols < len(rows); r++ {
			if parseInt(rows[r*stockCols].Text) == l.supplyW && parseInt(rows[r*stockCols+1].Text) == l.item {
				k.stock[n] = r
				break
			}
		}
		if k.stock[n] < 0 {
			return &workload.AbortError{Err: fmt.Errorf("tpcc: stock of item %d in warehouse %d: no row (are the tables prepared by `fathom prepare -w tpcc`, and not changed since?)", l.item, l.supplyW)}
		}
	}
	return nil
}

// parseInt reads a whole number sent as text ("" and garbage read as 0).
func parseInt(b []byte) int64 {
	var n int64
	neg := false
	for i, c := range b {
		switch {
		case c == '-' && i == 0:
			neg = true
		case c >= '0' && c <= '9':
			n = n*10 + int64(c-'0')
		default:
			if neg {
				return -n
			}
			return n
		}
	}
	if neg {
		return -n
	}
	return n
}

// parseCents reads a decimal sent as text ("12.5", "-10.00", "7", or SQLite's
// floating-point "29.999999999") as hundredths, rounded to the nearest.
func parseCents(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0
	}
	if f < 0 {
		return -int64(-f*100 + 0.5)
	}
	return int64(f*100 + 0.5)
}
