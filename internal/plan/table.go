package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/workload"
)

// Table options lay out a built-in workload's tables when the plan prepares them, as
// fathom prepare's flags do (pgbench -i's and sysbench prepare's): table: {engine:
// Aria}, or an axis over them (table.engine: [InnoDB, Aria]). The workload and the
// target's dialect refuse what they cannot do when the data is prepared.
var tableKeys = []string{"engine", "fillfactor", "unlogged", "partitions", "partition_method", "foreign_keys", "auto_inc", "secondary", "create_secondary"}

var engineRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// checkTable checks one table option's value.
func checkTable(name, value string) string {
	switch name {
	case "engine":
		if !engineRE.MatchString(value) {
			return fmt.Sprintf("table engine %q is not an engine name (e.g. InnoDB, MyISAM, Aria, RocksDB)", value)
		}
	case "fillfactor":
		if n, err := strconv.Atoi(value); err != nil || n < 10 || n > 100 {
			return fmt.Sprintf("table fillfactor must be a whole number from 10 to 100, not %q", value)
		}
	case "partitions":
		if n, err := strconv.Atoi(value); err != nil || n < 0 {
			return fmt.Sprintf("table partitions must be a whole number (0: none), not %q", value)
		}
	case "partition_method":
		if value != "range" && value != "hash" {
			return fmt.Sprintf("table partition_method must be range or hash, not %q", value)
		}
	case "unlogged", "foreign_keys", "auto_inc", "secondary", "create_secondary":
		if _, ok := parseBool(value); !ok {
			return fmt.Sprintf("table %s must be true or false, not %q", name, value)
		}
	default:
		return fmt.Sprintf("table: unknown option %q (known: %s)", name, strings.Join(tableKeys, ", "))
	}
	return ""
}

// Layout is how the cell's workload tables are laid out when prepared (the zero
// Layout: the tools' defaults).
func (c *Cell) Layout() workload.Layout {
	var l workload.Layout
	for _, kv := range c.Table {
		b, _ := parseBool(kv.Value)
		switch kv.Name {
		case "engine":
			l.Engine = kv.Value
		case "fillfactor":
			l.FillFactor, _ = strconv.Atoi(kv.Value)
		case "partitions":
			l.Partitions, _ = strconv.Atoi(kv.Value)
		case "partition_method":
			l.PartitionMethod = kv.Value
		case "unlogged":
			l.Unlogged = b
		case "foreign_keys":
			l.ForeignKeys = b
		case "secondary":
			l.Secondary = b
		case "auto_inc":
			l.AutoInc = &b
		case "create_secondary":
			l.CreateSecondary = &b
		}
	}
	return l
}
