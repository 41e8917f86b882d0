package oltp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// Limits of the options.
const (
	maxTables    = 100_000
	maxTableSize = 1<<31 - 1 // id is an INTEGER column
	maxCount     = 100_000   // statements of one kind per transaction
)

// Every option the family knows, with sysbench's names (dashes become underscores) and
// defaults. Each script lists the ones it uses.
var allOptions = map[string]workload.Option{
	"tables":            {Name: "tables", Default: "1", Help: "number of tables sbtest1 … sbtestN; each transaction picks them at random"},
	"table_size":        {Name: "table_size", Help: "rows per table (prepare: default 10000; run: detected from max(id) of sbtest1 when not given)"},
	"range_size":        {Name: "range_size", Default: "100", Help: "rows in each range SELECT"},
	"point_selects":     {Name: "point_selects", Default: "10", Help: "point SELECTs per transaction"},
	"simple_ranges":     {Name: "simple_ranges", Default: "1", Help: "simple range SELECTs per transaction"},
	"sum_ranges":        {Name: "sum_ranges", Default: "1", Help: "SELECT SUM(k) ranges per transaction"},
	"order_ranges":      {Name: "order_ranges", Default: "1", Help: "SELECT … ORDER BY c ranges per transaction"},
	"distinct_ranges":   {Name: "distinct_ranges", Default: "1", Help: "SELECT DISTINCT c … ORDER BY c ranges per transaction"},
	"range_selects":     {Name: "range_selects", Default: "on", Help: "run the range SELECTs at all (on/off)"},
	"index_updates":     {Name: "index_updates", Default: "1", Help: "UPDATEs of the indexed column k per transaction"},
	"non_index_updates": {Name: "non_index_updates", Default: "1", Help: "UPDATEs of the unindexed column c per transaction"},
	"delete_inserts":    {Name: "delete_inserts", Default: "1", Help: "DELETE + INSERT pairs of one row per transaction"},
	"skip_trx":          {Name: "skip_trx", Default: "off", Help: "send the statements in autocommit mode, without BEGIN/COMMIT (on/off)"},
	"rand_type":         {Name: "rand_type", Default: "special", Help: "distribution of ids and k values: uniform, zipfian, gaussian or special"},
	"rand_zipfian_exp":  {Name: "rand_zipfian_exp", Default: "0.8", Help: "exponent of the zipfian distribution (0 or more)"},
	"rand_spec_iter":    {Name: "rand_spec_iter", Default: "12", Help: "uniform draws averaged by gaussian and by special's cold part"},
	"rand_spec_pct":     {Name: "rand_spec_pct", Default: "1", Help: "special: percentage of the range that is hot (around the middle)"},
	"rand_spec_res":     {Name: "rand_spec_res", Default: "75", Help: "special: percentage of draws that hit the hot part"},
}

var commonOptions = []string{"tables", "table_size", "rand_type", "rand_zipfian_exp", "rand_spec_iter", "rand_spec_pct", "rand_spec_res"}

func optionList(names ...string) []workload.Option {
	out := make([]workload.Option, 0, len(commonOptions)+len(names))
	for _, n := range append(append([]string(nil), commonOptions...), names...) {
		o, ok := allOptions[n]
		if !ok {
			panic("oltp: no option " + n)
		}
		out = append(out, o)
	}
	return out
}

// config is the resolved options. Options a script does not list keep their defaults.
type config struct {
	tables         int
	tableSize      int64 // 0 until given or detected
	sizeGiven      bool
	rangeSize      int64
	pointSelects   int
	simpleRanges   int
	sumRanges      int
	orderRanges    int
	distinctRanges int
	rangeSelects   bool
	indexUpdates   int
	nonIndexUpd    int
	deleteInserts  int
	skipTrx        bool
	randType       gen.Kind
	params         gen.Params
}

func parseConfig(opts map[string]string) (config, error) {
	// Fill the defaults of options this script does not list.
	all := map[string]string{}
	for n, o := range allOptions {
		all[n] = o.Default
	}
	for n, v := range opts {
		all[n] = v
	}
	var c config
	var err error
	ints := []struct {
		name     string
		dst      *int
		min, max int64
	}{
		{"tables", &c.tables, 1, maxTables},
		{"point_selects", &c.pointSelects, 0, maxCount},
		{"simple_ranges", &c.simpleRanges, 0, maxCount},
		{"sum_ranges", &c.sumRanges, 0, maxCount},
		{"order_ranges", &c.orderRanges, 0, maxCount},
		{"distinct_ranges", &c.distinctRanges, 0, maxCount},
		{"index_updates", &c.indexUpdates, 0, maxCount},
		{"non_index_updates", &c.nonIndexUpd, 0, maxCount},
		{"delete_inserts", &c.deleteInserts, 0, maxCount},
		{"rand_spec_iter", &c.params.Iter, 1, 1000},
	}
	for _, o := range ints {
		v, err := workload.Int(all, o.name, o.min, o.max)
		if err != nil {
			return c, err
		}
		*o.dst = int(v)
	}
	if strings.TrimSpace(all["table_size"]) != "" {
		if c.tableSize, err = workload.Int(all, "table_size", 1, maxTableSize); err != nil {
			return c, err
		}
		c.sizeGiven = true
	}
	if c.rangeSize, err = workload.Int(all, "range_size", 1, maxTableSize); err != nil {
		return c, err
	}
	if c.rangeSelects, err = workload.Bool(all, "range_selects"); err != nil {
		return c, err
	}
	if c.skipTrx, err = workload.Bool(all, "skip_trx"); err != nil {
		return c, err
	}
	if c.randType, err = gen.ParseKind(all["rand_type"]); err != nil {
		return c, fmt.Errorf("option rand_type: %w", err)
	}
	pct, err := workload.Int(all, "rand_spec_pct", 0, 100)
	if err != nil {
		return c, err
	}
	res, err := workload.Int(all, "rand_spec_res", 0, 99)
	if err != nil {
		return c, err
	}
	c.params.SpecialPct, c.params.SpecialRes = float64(pct), float64(res)
	e, err := strconv.ParseFloat(strings.TrimSpace(all["rand_zipfian_exp"]), 64)
	if err != nil || !(e >= 0) || e > 1000 {
		return c, fmt.Errorf("option rand_zipfian_exp: %q is not a number from 0 to 1000", all["rand_zipfian_exp"])
	}
	c.params.ZipfExp = e
	return c, nil
}
