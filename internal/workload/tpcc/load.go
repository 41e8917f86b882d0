package tpcc

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

var engineName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// Random streams of the loader: each warehouse's tables draw from streams of their
// own, so the data does not depend on how many loaders run or in which order.
const (
	sItem = iota + 1
	sWarehouse
	sStock
	sDistrict
	sCustomer
	sHistory
	sOrderCount
	sOrderCustomer
	sOrders
	sOrderLine
)

func stream(wid int64, s int) uint64 { return uint64(wid)<<8 | uint64(s) }

func (w *tpccWorkload) rnd(wid int64, s int) *gen.Rand { return gen.New(loadSeed, stream(wid, s)) }

// arena holds the text values of one row: fields are appended and sliced, and it is
// large enough that appending never moves the earlier fields.
type arena struct{ b []byte }

const arenaSize = 4096

func newArena() *arena { return &arena{b: make([]byte, 0, arenaSize)} }

func (a *arena) reset() { a.b = a.b[:0] }

// add appends what f appends and returns it as a text value.
func (a *arena) add(f func([]byte) []byte) target.Value {
	start := len(a.b)
	a.b = f(a.b)
	if cap(a.b) != arenaSize {
		panic("tpcc: row larger than its arena")
	}
	return target.Text(a.b[start:len(a.b):len(a.b)])
}

func (a *arena) str(s string) target.Value {
	return a.add(func(b []byte) []byte { return append(b, s...) })
}

// olCounts draws O_OL_CNT (5 to 15) of every order of a warehouse, from a stream of
// its own so that the number of order lines is known before loading.
func (w *tpccWorkload) olCounts(wid int64) *[districtsPerWarehouse][ordersPerDistrict]uint8 {
	var c [districtsPerWarehouse][ordersPerDistrict]uint8
	r := w.rnd(wid, sOrderCount)
	for d := range c {
		for o := range c[d] {
			c[d][o] = uint8(r.Uniform(5, 15))
		}
	}
	return &c
}

// progress adds up the rows loaded per table over the loaders.
type progress struct {
	mu    sync.Mutex
	done  map[string]int64
	total map[string]int64
	p     workload.Progress
}

func (pr *progress) add(table string, n int64) {
	pr.mu.Lock()
	pr.done[table] += n
	pr.p(table, pr.done[table], pr.total[table])
	pr.mu.Unlock()
}

// Prepare drops and creates the nine tables and loads them by clause 4.3.3.1: the
// items once, then each warehouse with its stock, districts, customers, history,
// orders, order lines and new orders, several warehouses at a time on their own
// connections (one on SQLite, which has one writer). Rows go through the target's
// fast path (COPY on PostgreSQL, multi-row INSERT on MySQL, batched transactions on
// SQLite). Primary keys are declared before loading on MySQL (InnoDB clusters rows
// by it: adding it later would copy each table) and SQLite, added after it on
// PostgreSQL; then secondary indexes, foreign keys (--foreign-keys) and statistics.
// A prepare killed part-way leaves the marker workload.Prepare writes; preparing
// again starts over.
func (w *tpccWorkload) Prepare(ctx context.Context, t target.Target, p workload.Progress) error {
	nw := w.warehouses
	if nw == 0 {
		nw = 1
	}
	if p == nil {
		p = func(string, int64, int64) {}
	}
	d := t.Dialect()
	if w.layout.Engine != "" {
		if !engineName.MatchString(w.layout.Engine) {
			return fmt.Errorf("--mysql-storage-engine %q is not an engine name (e.g. InnoDB, MyISAM, RocksDB)", w.layout.Engine)
		}
		d.TableOptions = " ENGINE=" + w.layout.Engine
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := w.Cleanup(ctx, conn); err != nil {
		return err
	}
	pkFirst := d.TableEngine || !d.PrimaryKeyAfterLoad
	defs := tables()
	if n := int64(w.layout.Partitions); n > nw {
		return fmt.Errorf("--partitions %d: more partitions than the %d warehouses; give at most %d", n, nw, nw)
	}
	if err := w.createTables(ctx, conn, &d, defs, pkFirst, nw); err != nil {
		return err
	}

	pr := w.newProgress(nw, p)
	now := time.Now().UTC().Truncate(time.Microsecond)
	if err := w.loadItems(ctx, conn, pr); err != nil {
		return err
	}
	if err := w.loadWarehouses(ctx, t, conn, &d, nw, now, pr); err != nil {
		return err
	}

	if err := w.finishTables(ctx, conn, &d, defs, pkFirst); err != nil {
		return err
	}
	if w.warehouses == 0 {
		w.warehouses = nw
	}
	return nil
}

// createTables creates the nine tables, with their primary keys when pkFirst.
func (w *tpccWorkload) createTables(ctx context.Context, conn target.Conn, d *target.Dialect, defs []target.Table, pkFirst bool, nw int64) error {
	for _, tb := range defs {
		stmts, err := w.createSQL(d, tb, pkFirst, nw)
		if err != nil {
			return err
		}
		for _, sql := range stmts {
			if err := conn.Exec(ctx, sql); err != nil {
				return fmt.Errorf("creating %s: %w", tb.Name, err)
			}
		}
	}
	return nil
}

// newProgress counts the rows each table will have (order lines drawn ahead) and
// reports every table at 0.
func (w *tpccWorkload) newProgress(nw int64, p workload.Progress) *progress {
	var lines int64
	for wid := int64(1); wid <= nw; wid++ {
		for _, ds := range w.olCounts(wid) {
			for _, c := range ds {
				lines += int64(c)
			}
		}
	}
	per := func(n int64) int64 { return n * nw }
	pr := &progress{done: map[string]int64{}, p: p, total: map[string]int64{
		tItem: items, tWarehouse: nw, tStock: per(items), tDistrict: per(districtsPerWarehouse),
		tCustomer: per(districtsPerWarehouse * customersPerDistrict), tHistory: per(districtsPerWarehouse * customersPerDistrict),
		tOrders: per(districtsPerWarehouse * ordersPerDistrict), tOrderLine: lines,
		tNewOrder: per(districtsPerWarehouse * (ordersPerDistrict - firstUndelivered + 1)),
	}}
	for _, name := range tableNames {
		p(name, 0, pr.total[name])
	}
	return pr
}

// loadWarehouses loads the warehouses, several at a time on their own connections
// (one on a single-writer target); conn is the first loader's.
func (w *tpccWorkload) loadWarehouses(ctx context.Context, t target.Target, conn target.Conn, d *target.Dialect, nw int64, now time.Time, pr *progress) error {
	loaders := min(int64(w.loaders), nw)
	if d.SingleWriter {
		loaders = 1
	}
	ctx2, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int64)
	errs := make([]error, loaders)
	var wg sync.WaitGroup
	for i := range loaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conn
			if i > 0 {
				var err error
				if c, err = t.Connect(ctx2); err != nil {
					errs[i] = err
					cancel()
					return
				}
				defer c.Close()
			}
			for wid := range jobs {
				if err := w.loadWarehouse(ctx2, c, wid, now, pr); err != nil {
					errs[i] = fmt.Errorf("warehouse %d: %w", wid, err)
					cancel()
					return
				}
			}
		}()
	}
feed:
	for wid := int64(1); wid <= nw; wid++ {
		select {
		case jobs <- wid:
		case <-ctx2.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// finishTables adds what comes after loading: primary keys (when not declared
// first), secondary indexes, foreign keys (--foreign-keys) and statistics.
func (w *tpccWorkload) finishTables(ctx context.Context, conn target.Conn, d *target.Dialect, defs []target.Table, pkFirst bool) error {
	if !pkFirst {
		for _, tb := range defs {
			if sql := d.AddPrimaryKey(tb); sql != "" {
				if err := conn.Exec(ctx, sql); err != nil {
					return fmt.Errorf("adding the primary key of %s: %w", tb.Name, err)
				}
			}
		}
	}
	for _, tb := range defs {
		for _, sql := range d.CreateIndexes(tb) {
			if err := conn.Exec(ctx, sql); err != nil {
				return fmt.Errorf("indexing %s: %w", tb.Name, err)
			}
		}
	}
	if w.layout.ForeignKeys {
		for _, fk := range foreignKeys {
			if err := conn.Exec(ctx, fk); err != nil {
				return fmt.Errorf("adding a foreign key (%s): %w", fk, err)
			}
		}
	}
	if d.AnalyzeSQL != "" {
		for _, tb := range defs {
			if err := conn.Exec(ctx, fmt.Sprintf(d.AnalyzeSQL, tb.Name)); err != nil {
				return fmt.Errorf("analyzing %s: %w", tb.Name, err)
			}
		}
	}
	return nil
}

// progressEvery is how many rows of a table pass between progress reports.
const progressEvery = 10_000

// load runs one Load, reporting progress every progressEvery rows.
func load(ctx context.Context, conn target.Conn, pr *progress, table string, cols []string, n int64, fill func(row []target.Value, i int64)) error {
	var i, reported int64
	_, err := conn.Load(ctx, table, cols, func(row []target.Value) bool {
		if i == n {
			return false
		}
		fill(row, i)
		i++
		if i-reported == progressEvery {
			pr.add(table, i-reported)
			reported = i
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("loading %s: %w", table, err)
	}
	if i > reported {
		pr.add(table, i-reported)
	}
	return nil
}

// loadItems loads ITEM: 100,000 items, I_DATA "ORIGINAL" in 10%.
func (w *tpccWorkload) loadItems(ctx context.Context, conn target.Conn, pr *progress) error {
	r := w.rnd(0, sItem)
	a := newArena()
	return load(ctx, conn, pr, tItem, []string{"i_id", "i_im_id", "i_name", "i_price", "i_data"}, items, func(row []target.Value, i int64) {
		a.reset()
		row[0] = target.Int64(i + 1)
		row[1] = target.Int64(r.Uniform(1, 10_000))
		row[2] = a.add(func(b []byte) []byte { return aString(r, b, 14, 24) })
		row[3] = a.add(func(b []byte) []byte { return appendCents(b, r.Uniform(100, 10_000)) })
		row[4] = a.add(func(b []byte) []byte { return data(r, b) })
	})
}

// loadWarehouse loads one warehouse and everything that belongs to it.
func (w *tpccWorkload) loadWarehouse(ctx context.Context, conn target.Conn, wid int64, now time.Time, pr *progress) error {
	a := newArena()
	wv := target.Int64(wid)
	astr := func(r *gen.Rand, x, y int64) target.Value {
		return a.add(func(b []byte) []byte { return aString(r, b, x, y) })
	}
	addr := func(r *gen.Rand, row []target.Value) {
		row[0], row[1], row[2] = astr(r, 10, 20), astr(r, 10, 20), astr(r, 10, 20)
		row[3] = a.add(func(b []byte) []byte { return aString(r, b, 2, 2) })
		row[4] = a.add(func(b []byte) []byte { return zip(r, b) })
	}
	tax := func(r *gen.Rand) target.Value {
		return a.add(func(b []byte) []byte { return appendFrac4(b, r.Uniform(0, 2000)) })
	}

	r := w.rnd(wid, sWarehouse)
	err := load(ctx, conn, pr, tWarehouse, []string{"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"}, 1,
		func(row []target.Value, _ int64) {
			a.reset()
			row[0], row[1] = wv, astr(r, 6, 10)
			addr(r, row[2:7])
			row[7], row[8] = tax(r), a.str("300000.00")
		})
	if err != nil {
		return err
	}

	r = w.rnd(wid, sStock)
	scols := []string{"s_i_id", "s_w_id", "s_quantity"}
	for d := 1; d <= districtsPerWarehouse; d++ {
		scols = append(scols, fmt.Sprintf("s_dist_%02d", d))
	}
	scols = append(scols, "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data")
	err = load(ctx, conn, pr, tStock, scols, items, func(row []target.Value, i int64) {
		a.reset()
		row[0], row[1], row[2] = target.Int64(i+1), wv, target.Int64(r.Uniform(10, 100))
		for d := range districtsPerWarehouse {
			row[3+d] = astr(r, 24, 24)
		}
		row[13], row[14], row[15] = target.Int64(0), target.Int64(0), target.Int64(0)
		row[16] = a.add(func(b []byte) []byte { return data(r, b) })
	})
	if err != nil {
		return err
	}

	r = w.rnd(wid, sDistrict)
	err = load(ctx, conn, pr, tDistrict, []string{"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id"},
		districtsPerWarehouse, func(row []target.Value, i int64) {
			a.reset()
			row[0], row[1], row[2] = target.Int64(i+1), wv, astr(r, 6, 10)
			addr(r, row[3:8])
			row[8], row[9], row[10] = tax(r), a.str("30000.00"), target.Int64(ordersPerDistrict+1)
		})
	if err != nil {
		return err
	}

	cLoad := loadConstants()
	r = w.rnd(wid, sCustomer)
	perW := int64(districtsPerWarehouse * customersPerDistrict)
	since := target.Time(now)
	err = load(ctx, conn, pr, tCustomer, []string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2",
		"c_city", "c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance", "c_ytd_payment",
		"c_payment_cnt", "c_delivery_cnt", "c_data"}, perW, func(row []target.Value, i int64) {
		a.reset()
		cid, did := i%customersPerDistrict+1, i/customersPerDistrict+1
		row[0], row[1], row[2], row[3], row[4] = target.Int64(cid), target.Int64(did), wv, astr(r, 8, 16), a.str("OE")
		n := cid - 1
		if cid > 1000 {
			n = nuRand(r, aLast, cLoad.Last, 0, 999)
		}
		row[5] = a.add(func(b []byte) []byte { return lastName(b, n) })
		addr(r, row[6:11])
		row[11] = a.add(func(b []byte) []byte { return nString(r, b, 16, 16) })
		row[12] = since
		if r.Uniform(1, 10) == 1 {
			row[13] = a.str("BC")
		} else {
			row[13] = a.str("GC")
		}
		row[14] = a.str("50000.00")
		row[15] = a.add(func(b []byte) []byte { return appendFrac4(b, r.Uniform(0, 5000)) })
		row[16], row[17] = a.str("-10.00"), a.str("10.00")
		row[18], row[19] = target.Int64(1), target.Int64(0)
		row[20] = astr(r, 300, 500)
	})
	if err != nil {
		return err
	}

	r = w.rnd(wid, sHistory)
	err = load(ctx, conn, pr, tHistory, []string{"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"},
		perW, func(row []target.Value, i int64) {
			a.reset()
			cid, did := target.Int64(i%customersPerDistrict+1), target.Int64(i/customersPerDistrict+1)
			row[0], row[1], row[2], row[3], row[4] = cid, did, wv, did, wv
			row[5], row[6], row[7] = since, a.str("10.00"), astr(r, 12, 24)
		})
	if err != nil {
		return err
	}

	// O_C_ID is a random permutation of the customers in each district.
	counts := w.olCounts(wid)
	var perm [districtsPerWarehouse][customersPerDistrict]int16
	rp := w.rnd(wid, sOrderCustomer)
	for d := range perm {
		for c := range perm[d] {
			perm[d][c] = int16(c + 1)
		}
		for c := len(perm[d]) - 1; c > 0; c-- {
			j := rp.Uniform(0, int64(c))
			perm[d][c], perm[d][j] = perm[d][j], perm[d][c]
		}
	}
	entry := target.Time(now)
	r = w.rnd(wid, sOrders)
	err = load(ctx, conn, pr, tOrders, []string{"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"},
		districtsPerWarehouse*ordersPerDistrict, func(row []target.Value, i int64) {
			oid, d := i%ordersPerDistrict+1, i/ordersPerDistrict
			row[0], row[1], row[2], row[3], row[4] = target.Int64(oid), target.Int64(d+1), wv, target.Int64(int64(perm[d][oid-1])), entry
			if oid < firstUndelivered {
				row[5] = target.Int64(r.Uniform(1, 10))
			} else {
				row[5] = target.Null()
			}
			row[6], row[7] = target.Int64(int64(counts[d][oid-1])), target.Int64(1)
		})
	if err != nil {
		return err
	}

	r = w.rnd(wid, sOrderLine)
	var total int64
	for _, ds := range counts {
		for _, c := range ds {
			total += int64(c)
		}
	}
	d, oid, num := 0, int64(1), int64(0) // the order line after this one is number num+1 of order oid in district d+1
	err = load(ctx, conn, pr, tOrderLine, []string{"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d",
		"ol_quantity", "ol_amount", "ol_dist_info"}, total, func(row []target.Value, _ int64) {
		a.reset()
		if num == int64(counts[d][oid-1]) {
			num = 0
			if oid++; oid > ordersPerDistrict {
				oid = 1
				d++
			}
		}
		num++
		row[0], row[1], row[2], row[3] = target.Int64(oid), target.Int64(int64(d+1)), wv, target.Int64(num)
		row[4], row[5] = target.Int64(r.Uniform(1, items)), wv
		if oid < firstUndelivered {
			row[6], row[8] = entry, a.str("0.00")
		} else {
			row[6] = target.Null()
			row[8] = a.add(func(b []byte) []byte { return appendCents(b, r.Uniform(1, 999_999)) })
		}
		row[7], row[9] = target.Int64(5), astr(r, 24, 24)
	})
	if err != nil {
		return err
	}

	per := int64(ordersPerDistrict - firstUndelivered + 1)
	return load(ctx, conn, pr, tNewOrder, []string{"no_o_id", "no_d_id", "no_w_id"}, districtsPerWarehouse*per,
		func(row []target.Value, i int64) {
			row[0], row[1], row[2] = target.Int64(firstUndelivered+i%per), target.Int64(i/per+1), wv
		})
}
