package builtin

import (
	"slices"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	names := Names()
	want := []string{
		"fanout",
		"oltp_delete", "oltp_insert", "oltp_point_select", "oltp_read_only", "oltp_read_write",
		"oltp_update_index", "oltp_update_non_index", "oltp_write_only",
		"redis-bench", "redis-kv", "redis-ycsb",
		"seqrand",
		"tpcb", "tpcb-select", "tpcb-simple-update",
		"tpcc",
		"ycsb",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("Names() = %v", names)
	}
	for _, n := range names {
		s, err := Lookup(n)
		if err != nil || s == nil || s.Name != n || s.New == nil || s.Description == "" {
			t.Fatalf("Lookup(%q) = %+v, %v", n, s, err)
		}
		w, err := s.New(nil)
		if err != nil {
			t.Fatalf("%s with defaults: %v", n, err)
		}
		if w.Name() != n || len(w.TxnTypes()) == 0 {
			t.Errorf("%s: name %q, types %v", n, w.Name(), w.TxnTypes())
		}
		seen := map[string]bool{}
		for _, o := range s.Options {
			if seen[o.Name] || o.Help == "" {
				t.Errorf("%s: option %q duplicated or without help", n, o.Name)
			}
			seen[o.Name] = true
		}
	}
	_, err := Lookup("pgbench")
	if err == nil || !strings.Contains(err.Error(), `unknown workload "pgbench" (available: fanout, oltp_delete, `) || !strings.Contains(err.Error(), "ycsb; or the path of a workload file") {
		t.Errorf("unknown name: %v", err)
	}
}

// The CLI's --scale, --tables, --table-size, --rand-type and --warehouses map to these names.
func TestCLIOptionNames(t *testing.T) {
	has := func(wl, opt string) bool {
		s, _ := Lookup(wl)
		for _, o := range s.Options {
			if o.Name == opt {
				return true
			}
		}
		return false
	}
	for _, c := range []struct{ wl, opt string }{
		{"tpcb", "scale"}, {"tpcb-select", "scale"}, {"tpcb-simple-update", "scale"},
		{"oltp_read_write", "tables"}, {"oltp_read_write", "table_size"}, {"oltp_read_write", "rand_type"},
		{"oltp_read_write", "range_size"}, {"oltp_read_write", "point_selects"}, {"oltp_read_write", "simple_ranges"},
		{"oltp_read_write", "sum_ranges"}, {"oltp_read_write", "order_ranges"}, {"oltp_read_write", "distinct_ranges"},
		{"oltp_read_write", "index_updates"}, {"oltp_read_write", "non_index_updates"}, {"oltp_read_write", "delete_inserts"},
		{"oltp_read_write", "skip_trx"}, {"oltp_point_select", "tables"}, {"oltp_insert", "table_size"},
		{"tpcc", "warehouses"},
	} {
		if !has(c.wl, c.opt) {
			t.Errorf("%s has no option %s", c.wl, c.opt)
		}
	}
}
