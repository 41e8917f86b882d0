package tpcc

import (
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// Table names: the ones go-tpc, HammerDB and sysbench-tpcc (without its suffix) use.
const (
	tWarehouse = "warehouse"
	tDistrict  = "district"
	tCustomer  = "customer"
	tHistory   = "history"
	tNewOrder  = "new_order"
	tOrders    = "orders"
	tOrderLine = "order_line"
	tItem      = "item"
	tStock     = "stock"
)

// tableNames in loading order; dropped in reverse.
var tableNames = []string{tItem, tWarehouse, tDistrict, tCustomer, tHistory, tOrders, tNewOrder, tOrderLine, tStock}

// Scale of clause 1.2 and 4.3.
const (
	items                 = 100_000
	districtsPerWarehouse = 10
	customersPerDistrict  = 3000
	ordersPerDistrict     = 3000
	// firstUndelivered is the first order of a district loaded as undelivered (in
	// NEW_ORDER, no carrier): the last 900 of 3000.
	firstUndelivered = 2101
	maxWarehouses    = 100_000
)

func col(name, typ string) target.Column { return target.Column{Name: name, Type: typ} }
func key(name string) target.Column      { return target.Column{Name: name, Type: "int", NotNull: true} }

func address(p string) []target.Column {
	return []target.Column{col(p+"_street_1", "varchar(20)"), col(p+"_street_2", "varchar(20)"),
		col(p+"_city", "varchar(20)"), col(p+"_state", "char(2)"), col(p+"_zip", "char(9)")}
}

func cols(parts ...any) []target.Column {
	var out []target.Column
	for _, p := range parts {
		switch v := p.(type) {
		case target.Column:
			out = append(out, v)
		case []target.Column:
			out = append(out, v...)
		}
	}
	return out
}

// tables are the nine tables of clause 1.3 with the primary keys of clause 1.3 and the
// two secondary indexes every kit adds: customers by last name (Payment and
// Order-Status by name) and orders by customer (Order-Status).
func tables() []target.Table {
	stockCols := []any{key("s_i_id"), key("s_w_id"), col("s_quantity", "int")}
	for d := 1; d <= districtsPerWarehouse; d++ {
		stockCols = append(stockCols, col(fmt.Sprintf("s_dist_%02d", d), "char(24)"))
	}
	stockCols = append(stockCols, col("s_ytd", "int"), col("s_order_cnt", "int"), col("s_remote_cnt", "int"), col("s_data", "varchar(50)"))
	return []target.Table{
		{Name: tItem, PrimaryKey: []string{"i_id"}, Columns: cols(key("i_id"), col("i_im_id", "int"),
			col("i_name", "varchar(24)"), col("i_price", "decimal(5,2)"), col("i_data", "varchar(50)"))},
		{Name: tWarehouse, PrimaryKey: []string{"w_id"}, Columns: cols(key("w_id"), col("w_name", "varchar(10)"),
			address("w"), col("w_tax", "decimal(4,4)"), col("w_ytd", "decimal(12,2)"))},
		{Name: tDistrict, PrimaryKey: []string{"d_w_id", "d_id"}, Columns: cols(key("d_id"), key("d_w_id"),
			col("d_name", "varchar(10)"), address("d"), col("d_tax", "decimal(4,4)"), col("d_ytd", "decimal(12,2)"),
			col("d_next_o_id", "int"))},
		{Name: tCustomer, PrimaryKey: []string{"c_w_id", "c_d_id", "c_id"}, Columns: cols(key("c_id"), key("c_d_id"), key("c_w_id"),
			col("c_first", "varchar(16)"), col("c_middle", "char(2)"), col("c_last", "varchar(16)"), address("c"),
			col("c_phone", "char(16)"), col("c_since", "timestamp"), col("c_credit", "char(2)"),
			col("c_credit_lim", "decimal(12,2)"), col("c_discount", "decimal(4,4)"), col("c_balance", "decimal(12,2)"),
			col("c_ytd_payment", "decimal(12,2)"), col("c_payment_cnt", "int"), col("c_delivery_cnt", "int"),
			col("c_data", "varchar(500)")),
			Indexes: []target.Index{{Name: "idx_customer_name", Columns: []string{"c_w_id", "c_d_id", "c_last", "c_first"}}}},
		{Name: tHistory, Columns: cols(key("h_c_id"), key("h_c_d_id"), key("h_c_w_id"), key("h_d_id"), key("h_w_id"),
			col("h_date", "timestamp"), col("h_amount", "decimal(6,2)"), col("h_data", "varchar(24)"))},
		{Name: tOrders, PrimaryKey: []string{"o_w_id", "o_d_id", "o_id"}, Columns: cols(key("o_id"), key("o_d_id"), key("o_w_id"),
			key("o_c_id"), col("o_entry_d", "timestamp"), col("o_carrier_id", "int"), col("o_ol_cnt", "int"), col("o_all_local", "int")),
			Indexes: []target.Index{{Name: "idx_orders_customer", Columns: []string{"o_w_id", "o_d_id", "o_c_id", "o_id"}}}},
		{Name: tNewOrder, PrimaryKey: []string{"no_w_id", "no_d_id", "no_o_id"}, Columns: cols(key("no_o_id"), key("no_d_id"), key("no_w_id"))},
		{Name: tOrderLine, PrimaryKey: []string{"ol_w_id", "ol_d_id", "ol_o_id", "ol_number"}, Columns: cols(key("ol_o_id"), key("ol_d_id"),
			key("ol_w_id"), key("ol_number"), key("ol_i_id"), col("ol_supply_w_id", "int"), col("ol_delivery_d", "timestamp"),
			col("ol_quantity", "int"), col("ol_amount", "decimal(6,2)"), col("ol_dist_info", "char(24)"))},
		{Name: tStock, PrimaryKey: []string{"s_w_id", "s_i_id"}, Columns: cols(stockCols...)},
	}
}

// foreignKeys are clause 1.3's references, added after loading with --foreign-keys.
var foreignKeys = []string{
	"ALTER TABLE district ADD CONSTRAINT fk_district_warehouse FOREIGN KEY (d_w_id) REFERENCES warehouse (w_id)",
	"ALTER TABLE customer ADD CONSTRAINT fk_customer_district FOREIGN KEY (c_w_id, c_d_id) REFERENCES district (d_w_id, d_id)",
	"ALTER TABLE history ADD CONSTRAINT fk_history_customer FOREIGN KEY (h_c_w_id, h_c_d_id, h_c_id) REFERENCES customer (c_w_id, c_d_id, c_id)",
	"ALTER TABLE history ADD CONSTRAINT fk_history_district FOREIGN KEY (h_w_id, h_d_id) REFERENCES district (d_w_id, d_id)",
	"ALTER TABLE orders ADD CONSTRAINT fk_orders_customer FOREIGN KEY (o_w_id, o_d_id, o_c_id) REFERENCES customer (c_w_id, c_d_id, c_id)",
	"ALTER TABLE new_order ADD CONSTRAINT fk_new_order_orders FOREIGN KEY (no_w_id, no_d_id, no_o_id) REFERENCES orders (o_w_id, o_d_id, o_id)",
	"ALTER TABLE order_line ADD CONSTRAINT fk_order_line_orders FOREIGN KEY (ol_w_id, ol_d_id, ol_o_id) REFERENCES orders (o_w_id, o_d_id, o_id)",
	"ALTER TABLE order_line ADD CONSTRAINT fk_order_line_stock FOREIGN KEY (ol_supply_w_id, ol_i_id) REFERENCES stock (s_w_id, s_i_id)",
	"ALTER TABLE stock ADD CONSTRAINT fk_stock_warehouse FOREIGN KEY (s_w_id) REFERENCES warehouse (w_id)",
	"ALTER TABLE stock ADD CONSTRAINT fk_stock_item FOREIGN KEY (s_i_id) REFERENCES item (i_id)",
}

// warehouseColumn names each table's warehouse column, the partition key of
// --partitions (item has none and is not partitioned).
var warehouseColumn = map[string]string{
	tWarehouse: "w_id", tDistrict: "d_w_id", tCustomer: "c_w_id", tHistory: "h_w_id",
	tOrders: "o_w_id", tNewOrder: "no_w_id", tOrderLine: "ol_w_id", tStock: "s_w_id",
}

// createSQL renders the statements that create tb with the layout: the fill factor
// (PostgreSQL; not on history, as pgbench leaves its history table alone) and, with
// --partitions, the table split by warehouse into that many partitions, by range of
// warehouses (nw/partitions each, rounded up) or by hash: declarative partitions on
// PostgreSQL, PARTITION BY on MySQL. Every primary key includes the warehouse, as
// both require of a partitioned table's unique keys.
func (w *tpccWorkload) createSQL(d *target.Dialect, tb target.Table, pkFirst bool, nw int64) ([]string, error) {
	sql, err := d.CreateTable(tb, pkFirst)
	if err != nil {
		return nil, err
	}
	l := w.layout
	with := ""
	if l.FillFactor > 0 && tb.Name != tHistory {
		with = fmt.Sprintf(" WITH (fillfactor=%d)", l.FillFactor)
	}
	wcol, parted := warehouseColumn[tb.Name]
	n := int64(l.Partitions)
	if !parted || n == 0 {
		return []string{sql + with}, nil
	}
	hash := l.PartitionMethod == "hash"
	per := (nw + n - 1) / n // warehouses per range partition
	if d.TableEngine {      // MySQL: the partitions are clauses of the table's definition
		if hash {
			return []string{fmt.Sprintf("%s PARTITION BY HASH (%s) PARTITIONS %d", sql, wcol, n)}, nil
		}
		parts := make([]string, n)
		for i := range n {
			bound := "MAXVALUE"
			if i < n-1 {
				bound = fmt.Sprint((i+1)*per + 1)
			}
			parts[i] = fmt.Sprintf("PARTITION p%d VALUES LESS THAN (%s)", i+1, bound)
		}
		return []string{fmt.Sprintf("%s PARTITION BY RANGE (%s) (%s)", sql, wcol, strings.Join(parts, ", "))}, nil
	}
	method := "RANGE"
	if hash {
		method = "HASH"
	}
	out := []string{fmt.Sprintf("%s PARTITION BY %s (%s)", sql, method, wcol)}
	for i := range n {
		var bounds string
		if hash {
			bounds = fmt.Sprintf("WITH (MODULUS %d, REMAINDER %d)", n, i)
		} else {
			lo, hi := fmt.Sprint(i*per+1), fmt.Sprint((i+1)*per+1)
			if i == 0 {
				lo = "MINVALUE"
			}
			if i == n-1 {
				hi = "MAXVALUE"
			}
			bounds = "FROM (" + lo + ") TO (" + hi + ")"
		}
		out = append(out, fmt.Sprintf("CREATE TABLE %s_p%d PARTITION OF %s FOR VALUES %s%s", tb.Name, i+1, tb.Name, bounds, with))
	}
	return out, nil
}
