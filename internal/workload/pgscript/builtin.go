package pgscript

import (
	"fmt"
	"strings"
)

// builtins are pgbench's built-in scripts (pgbench -b), as its documentation lists
// them: the TPC-B-like transaction and its two reduced forms, on the pgbench tables.
var builtins = []struct{ name, desc, src string }{
	{"tpcb-like", "TPC-B (sort of): three updates, a select and an insert", `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`},
	{"simple-update", "tpcb-like without the teller and branch updates", `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`},
	{"select-only", "one point select on pgbench_accounts", `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`},
}

// builtinSource finds a built-in script by name or unambiguous prefix, as pgbench -b.
func builtinSource(name string) (full, src string, err error) {
	var found []int
	for i, b := range builtins {
		if b.name == name {
			return b.name, b.src, nil
		}
		if strings.HasPrefix(b.name, name) {
			found = append(found, i)
		}
	}
	if len(found) == 1 {
		return builtins[found[0]].name, builtins[found[0]].src, nil
	}
	var names []string
	for _, b := range builtins {
		names = append(names, b.name)
	}
	if len(found) > 1 {
		return "", "", fmt.Errorf("-b %s is ambiguous: it begins %s", name, strings.Join(names, " and "))
	}
	return "", "", fmt.Errorf("-b %s: no such built-in script (built-ins: %s)", name, strings.Join(names, ", "))
}
