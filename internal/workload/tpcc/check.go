package tpcc

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// condition is one consistency condition of clause 3.3.2.
type condition struct {
	Number int
	Rule   string
}

// conditions are the ones CheckData verifies.
var conditions = []condition{
	{1, "W_YTD = sum(D_YTD) of the warehouse's districts"},
	{2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) in each district"},
	{3, "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW_ORDER of each district"},
	{4, "sum(O_OL_CNT) = rows in ORDER_LINE of each district"},
	{5, "orders with no carrier (O_CARRIER_ID null) = rows in NEW_ORDER of each district"},
}

// violation is one condition that does not hold in one warehouse (and district).
type violation struct {
	Condition int    `json:"condition"`
	Warehouse int64  `json:"warehouse"`
	District  int64  `json:"district,omitempty"`
	Detail    string `json:"detail"`
}

func (v violation) String() string {
	where := fmt.Sprintf("warehouse %d", v.Warehouse)
	if v.District > 0 {
		where += fmt.Sprintf(" district %d", v.District)
	}
	return fmt.Sprintf("condition %d, %s: %s", v.Condition, where, v.Detail)
}

// checkResult is what CheckData found: per warehouse, which conditions were checked
// and which do not hold.
type checkResult struct {
	Warehouses int64       `json:"warehouses"`
	IDs        []int64     `json:"ids"` // the warehouses' ids, sorted
	Conditions []int       `json:"conditions"`
	Violations []violation `json:"violations"`
}

// ok reports whether every condition holds.
func (r *checkResult) ok() bool { return len(r.Violations) == 0 }

// badWarehouses lists the warehouses with a violation, sorted.
func (r *checkResult) badWarehouses() []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, v := range r.Violations {
		if !seen[v.Warehouse] {
			seen[v.Warehouse] = true
			out = append(out, v.Warehouse)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

type dkey struct{ w, d int64 }

// query runs sql and returns its rows keyed by the first two columns (warehouse and
// district; a district of 0 for per-warehouse rows), the rest as text.
func query(ctx context.Context, conn target.Conn, sql string, perDistrict bool) (map[dkey][]string, error) {
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("checking the data (%s): %w", sql, err)
	}
	out := make(map[dkey][]string, len(rows))
	for _, r := range rows {
		n := 1
		if perDistrict {
			n = 2
		}
		if len(r) < n {
			return nil, fmt.Errorf("checking the data (%s): short row", sql)
		}
		var k dkey
		if k.w, err = strconv.ParseInt(strings.TrimSpace(r[0]), 10, 64); err != nil {
			return nil, fmt.Errorf("checking the data (%s): %q is not a warehouse", sql, r[0])
		}
		if perDistrict {
			if k.d, err = strconv.ParseInt(strings.TrimSpace(r[1]), 10, 64); err != nil {
				return nil, fmt.Errorf("checking the data (%s): %q is not a district", sql, r[1])
			}
		}
		out[k] = r[n:]
	}
	return out, nil
}

// num reads a column as a number; NULL (and a missing row) reads as ok=false.
func num(vals []string, i int) (float64, bool) {
	if i >= len(vals) || strings.TrimSpace(vals[i]) == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(vals[i]), 64)
	return f, err == nil
}

func cents(f float64) int64 { return int64(math.Round(f * 100)) }

// checkData verifies conditions 1 to 5 of clause 3.3.2 on every warehouse and
// district in the tables, with one aggregate query per table. It reads every row of
// ORDERS, NEW_ORDER and ORDER_LINE; on a large database that takes a while and loads
// the server. Run it after a run, not during one: a run in progress changes the
// tables between the queries.
func checkData(ctx context.Context, conn target.Conn) (*checkResult, error) {
	wh, err := query(ctx, conn, "SELECT w_id, w_ytd FROM warehouse", false)
	if err != nil {
		return nil, err
	}
	dsum, err := query(ctx, conn, "SELECT d_w_id, sum(d_ytd) FROM district GROUP BY d_w_id", false)
	if err != nil {
		return nil, err
	}
	dist, err := query(ctx, conn, "SELECT d_w_id, d_id, d_next_o_id FROM district", true)
	if err != nil {
		return nil, err
	}
	ord, err := query(ctx, conn, "SELECT o_w_id, o_d_id, max(o_id), sum(o_ol_cnt), sum(CASE WHEN o_carrier_id IS NULL THEN 1 ELSE 0 END) FROM orders GROUP BY o_w_id, o_d_id", true)
	if err != nil {
		return nil, err
	}
	no, err := query(ctx, conn, "SELECT no_w_id, no_d_id, max(no_o_id), min(no_o_id), count(*) FROM new_order GROUP BY no_w_id, no_d_id", true)
	if err != nil {
		return nil, err
	}
	ol, err := query(ctx, conn, "SELECT ol_w_id, ol_d_id, count(*) FROM order_line GROUP BY ol_w_id, ol_d_id", true)
	if err != nil {
		return nil, err
	}

	res := &checkResult{Warehouses: int64(len(wh))}
	for k := range wh {
		res.IDs = append(res.IDs, k.w)
	}
	sort.Slice(res.IDs, func(i, j int) bool { return res.IDs[i] < res.IDs[j] })
	for _, c := range conditions {
		res.Conditions = append(res.Conditions, c.Number)
	}
	bad := func(c int, k dkey, format string, args ...any) {
		res.Violations = append(res.Violations, violation{Condition: c, Warehouse: k.w, District: k.d, Detail: fmt.Sprintf(format, args...)})
	}

	for k, v := range wh {
		ytd, ok1 := num(v, 0)
		sum, ok2 := num(dsum[k], 0)
		switch {
		case !ok1:
			bad(1, k, "W_YTD is NULL")
		case !ok2:
			bad(1, k, "the warehouse has no districts")
		case cents(ytd) != cents(sum):
			bad(1, k, "W_YTD is %.2f but its districts' D_YTD add up to %.2f", ytd, sum)
		}
	}
	for k, v := range dist {
		if _, ok := wh[dkey{k.w, 0}]; !ok {
			bad(1, k, "a district of a warehouse missing from WAREHOUSE")
		}
		next, okNext := num(v, 0)
		maxO, okO := num(ord[k], 0)
		olcnt, _ := num(ord[k], 1)
		open, _ := num(ord[k], 2)
		maxNO, okNO := num(no[k], 0)
		minNO, _ := num(no[k], 1)
		cntNO, _ := num(no[k], 2)
		lines, _ := num(ol[k], 0)
		switch {
		case !okNext:
			bad(2, k, "D_NEXT_O_ID is NULL")
		case !okO:
			bad(2, k, "the district has no orders (D_NEXT_O_ID %.0f)", next)
		case next-1 != maxO:
			bad(2, k, "D_NEXT_O_ID - 1 is %.0f but max(O_ID) is %.0f", next-1, maxO)
		case okNO && maxNO != maxO:
			bad(2, k, "max(NO_O_ID) is %.0f but max(O_ID) is %.0f", maxNO, maxO)
		}
		if okNO && maxNO-minNO+1 != cntNO {
			bad(3, k, "NEW_ORDER holds orders %.0f to %.0f (%.0f ids) in %.0f rows", minNO, maxNO, maxNO-minNO+1, cntNO)
		}
		if olcnt != lines {
			bad(4, k, "sum(O_OL_CNT) is %.0f but ORDER_LINE has %.0f rows", olcnt, lines)
		}
		if open != cntNO {
			bad(5, k, "%.0f orders have no carrier but NEW_ORDER has %.0f rows", open, cntNO)
		}
	}
	for _, m := range []map[dkey][]string{ord, no, ol} {
		for k := range m {
			if _, ok := dist[k]; !ok {
				bad(2, k, "rows of a district missing from DISTRICT")
			}
		}
	}
	sort.Slice(res.Violations, func(i, j int) bool {
		a, b := res.Violations[i], res.Violations[j]
		if a.Warehouse != b.Warehouse {
			return a.Warehouse < b.Warehouse
		}
		if a.District != b.District {
			return a.District < b.District
		}
		return a.Condition < b.Condition
	})
	return res, nil
}

// CheckData implements workload.DataChecker with the conditions of clause 3.3.2
// (package function CheckData), one part per warehouse.
func (w *tpccWorkload) CheckData(ctx context.Context, conn target.Conn) (*workload.DataReport, error) {
	for _, name := range tableNames {
		ok, err := tableExists(ctx, conn, name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: %s (prepare with: fathom prepare -w tpcc --warehouses N)", workload.ErrNotPrepared, name)
		}
	}
	res, err := checkData(ctx, conn)
	if err != nil {
		return nil, err
	}
	rep := &workload.DataReport{}
	for _, c := range conditions {
		rep.Rules = append(rep.Rules, fmt.Sprintf("TPC-C 3.3.2 condition %d: %s", c.Number, c.Rule))
	}
	bad := map[int64]int{}
	for _, v := range res.Violations {
		bad[v.Warehouse]++
		where := ""
		if v.District > 0 {
			where = fmt.Sprintf("district %d", v.District)
		}
		rep.Violations = append(rep.Violations, workload.DataViolation{
			Rule: fmt.Sprintf("condition %d", v.Condition), Part: fmt.Sprintf("warehouse %d", v.Warehouse), Where: where, Detail: v.Detail})
	}
	ids := res.IDs
	for wid := range bad {
		if !slices.Contains(ids, wid) {
			ids = append(ids, wid) // rows of a warehouse missing from WAREHOUSE
		}
	}
	slices.Sort(ids)
	for _, wid := range ids {
		rep.Parts = append(rep.Parts, workload.DataPart{Name: fmt.Sprintf("warehouse %d", wid), Violations: bad[wid]})
	}
	if len(rep.Parts) == 0 {
		return nil, fmt.Errorf("%w: %s is empty", workload.ErrNotPrepared, tWarehouse)
	}
	return rep, nil
}
