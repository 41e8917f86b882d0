// Package compat meets pgbench and sysbench users where they are: it names fathom's
// equivalent of their tools' flags, and finds the flag a misspelt one meant.
package compat

import (
	"strings"
)

// foreign maps a pgbench or sysbench flag that fathom does not take, as typed, to
// what to use instead. Flags fathom takes under the same name (-c, -T, -t, -R, -P, -L,
// -M, -s, --tables, --table-size, --rate, --time, --warmup …) are not here.
var foreign = map[string]string{
	// pgbench, initialization
	"-i":                 "pgbench -i is `fathom prepare --workload tpcb --scale N --target …`",
	"--initialize":       "pgbench -i is `fathom prepare --workload tpcb --scale N --target …`",
	"-I":                 "pgbench's init steps are `fathom prepare` (it creates, loads, adds keys and analyzes)",
	"--init-steps":       "pgbench's init steps are `fathom prepare` (it creates, loads, adds keys and analyzes)",
	"-F":                 "the fill factor is set when the tables are made: `fathom prepare --fillfactor N`",
	"--fillfactor":       "the fill factor is set when the tables are made: `fathom prepare --fillfactor N`",
	"--foreign-keys":     "foreign keys are made with the tables: `fathom prepare --foreign-keys`",
	"--unlogged-tables":  "unlogged tables are made by `fathom prepare --unlogged-tables`",
	"--partitions":       "partitions are made by `fathom prepare --partitions N [--partition-method range|hash]`",
	"--partition-method": "partitions are made by `fathom prepare --partitions N --partition-method range|hash`",
	"--tablespace":       "fathom prepare has no tablespace option: set the database's default_tablespace before `fathom prepare`",
	"--index-tablespace": "fathom prepare has no tablespace option: set the database's default_tablespace before `fathom prepare`",
	// pgbench, benchmarking
	"--progress-timestamp": "-P lines show the time since the start; the stored intervals carry wall-clock times (`fathom export RUN`)",
	"--exit-on-abort":      "fathom does not abort a client on an error: failures are counted per class and a lost server fails the run after --reconnect-timeout",
	"--show-script":        "a workload's statements are shown by `fathom workload show NAME`",
	"--host":               "the server goes in --target postgres://USER@HOST:PORT/DB (or PGHOST, PGPORT, PGUSER)",
	"-p":                   "the server goes in --target postgres://USER@HOST:PORT/DB (or PGHOST, PGPORT, PGUSER)",
	"--port":               "the server goes in --target postgres://USER@HOST:PORT/DB (or PGHOST, PGPORT, PGUSER)",
	"-U":                   "the user goes in --target postgres://USER@HOST/DB (or PGUSER)",
	"--username":           "the user goes in --target postgres://USER@HOST/DB (or PGUSER)",
	"-V":                   "fathom's version is `fathom --version`",
	// sysbench
	"--db-driver":            "the database kind is the --target URL's scheme: postgres://…, mysql://…, sqlite:PATH",
	"--mysql-host":           "the server goes in --target mysql://USER@HOST:PORT/DB (the password in ~/.my.cnf [client])",
	"--mysql-port":           "the server goes in --target mysql://USER@HOST:PORT/DB (the password in ~/.my.cnf [client])",
	"--mysql-user":           "the user goes in --target mysql://USER@HOST/DB (the password in ~/.my.cnf [client])",
	"--mysql-password":       "a password never needs the command line: put it in ~/.my.cnf [client] (or the --target URL)",
	"--mysql-db":             "the database goes in --target mysql://USER@HOST/DB",
	"--mysql-socket":         "a socket goes in --target mysql://USER@localhost/DB?socket=/path/to/mysqld.sock",
	"--pgsql-host":           "the server goes in --target postgres://USER@HOST:PORT/DB (or PGHOST)",
	"--pgsql-port":           "the server goes in --target postgres://USER@HOST:PORT/DB (or PGPORT)",
	"--pgsql-user":           "the user goes in --target postgres://USER@HOST/DB (or PGUSER)",
	"--pgsql-password":       "a password never needs the command line: put it in ~/.pgpass (or PGPASSWORD)",
	"--pgsql-db":             "the database goes in --target postgres://USER@HOST/DB",
	"--max-requests":         "a transaction count is --events N (total) or -t N (per client)",
	"--max-time":             "the duration is -T/--time",
	"--num-threads":          "clients are -c N (or --threads N)",
	"--tx-rate":              "the rate is -R/--rate (open loop, coordinated-omission correct)",
	"--oltp-tables-count":    "the number of tables is --tables N",
	"--oltp-table-size":      "rows per table are --table-size N",
	"--mysql-ignore-errors":  "serialization failures and deadlocks are retried with --max-tries N; other errors are counted, never fatal",
	"--pgsql-ignore-errors":  "serialization failures and deadlocks are retried with --max-tries N; other errors are counted, never fatal",
	"--forced-shutdown":      "Ctrl-C or -T stops fathom gracefully; in-flight statements get 1.5s and the run is kept",
	"--verbosity":            "fathom prints one line per interval (-P) and one line per problem; -q for none",
	"--validate":             "fathom does not check results; use `fathom check` for conditions on a run",
	"--thread-stack-size":    "fathom's clients are goroutines: there is no stack size to set",
	"--thread-init-timeout":  "clients connect with --connect-timeout",
	"--report-checkpoints":   "every run keeps every interval: `fathom show RUN` and `fathom report RUN`",
	"--point-selects":        "oltp options go through --set: --set point_selects=N",
	"--simple-ranges":        "oltp options go through --set: --set simple_ranges=N",
	"--sum-ranges":           "oltp options go through --set: --set sum_ranges=N",
	"--order-ranges":         "oltp options go through --set: --set order_ranges=N",
	"--distinct-ranges":      "oltp options go through --set: --set distinct_ranges=N",
	"--range-size":           "oltp options go through --set: --set range_size=N",
	"--range-selects":        "oltp options go through --set: --set range_selects=on|off",
	"--index-updates":        "oltp options go through --set: --set index_updates=N",
	"--non-index-updates":    "oltp options go through --set: --set non_index_updates=N",
	"--delete-inserts":       "oltp options go through --set: --set delete_inserts=N",
	"--skip-trx":             "oltp options go through --set: --set skip_trx=on",
	"--rand-zipfian-exp":     "oltp options go through --set: --set rand_zipfian_exp=X",
	"--rand-spec-pct":        "oltp options go through --set: --set rand_spec_pct=N",
	"--rand-spec-res":        "oltp options go through --set: --set rand_spec_res=N",
	"--rand-spec-iter":       "oltp options go through --set: --set rand_spec_iter=N",
	"--auto-inc":             "the id column is made by `fathom prepare --auto-inc=on|off`",
	"--secondary":            "the index on k is made by `fathom prepare --secondary`",
	"--create-secondary":     "the index on k is made by `fathom prepare --create-secondary=on|off`",
	"--mysql-storage-engine": "the storage engine is chosen by `fathom prepare --mysql-storage-engine NAME`",
}

// Foreign returns what to use instead of a pgbench or sysbench flag that the command
// does not take, from the parser's error ("unknown flag: --foo", "unknown shorthand
// flag: 'x' in -x5"), or "".
func Foreign(err string) (flag, hint string) {
	flag = unknown(err)
	if flag == "" {
		return "", ""
	}
	return flag, foreign[flag]
}

// unknown is the flag an "unknown flag" error is about, as typed ("--foo", "-x"),
// or "".
func unknown(err string) string {
	if name, ok := strings.CutPrefix(err, "unknown flag: "); ok {
		name, _, _ = strings.Cut(name, "=")
		return name
	}
	if rest, ok := strings.CutPrefix(err, "unknown shorthand flag: '"); ok && len(rest) > 1 && rest[1] == '\'' {
		return "-" + rest[:1]
	}
	return ""
}

// sameBenchmark groups the names under which the same benchmark is stored: fathom's
// tpcb workloads and pgbench's built-in scripts (-b, -S, -N).
var sameBenchmark = [][]string{
	{"tpcb", "pgbench:tpcb-like"},
	{"tpcb-select", "pgbench:select-only"},
	{"tpcb-simple-update", "pgbench:simple-update"},
}

// WorkloadSpellings are the stored workload names of the benchmark name is one
// spelling of, name first; just name when it has no other.
func WorkloadSpellings(name string) []string {
	for _, g := range sameBenchmark {
		for _, n := range g {
			if n == name {
				out := []string{name}
				for _, o := range g {
					if o != name {
						out = append(out, o)
					}
				}
				return out
			}
		}
	}
	return []string{name}
}
