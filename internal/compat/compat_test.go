package compat

import (
	"strings"
	"testing"
)

func TestFlagHint(t *testing.T) {
	names := []string{"clients", "label", "tables", "time", "transactions", "rate", "seed"}
	for _, c := range []struct{ err, want string }{
		{"unknown shorthand flag: 'i' in -i", "-i is not a fathom run flag: pgbench -i is `fathom prepare"},
		{"unknown flag: --mysql-host", "--mysql-host is not a fathom run flag: the server goes in --target mysql://"},
		{"unknown flag: --progress-timestamp", "-P lines show the time since the start"},
		{"unknown flag: --clinets", "unknown flag: --clinets: did you mean --clients?"},
		{"unknown flag: --tim", "did you mean --time?"},
		// Two neighbours swapped are one edit: --tables, not --label (two edits away
		// from --tabels as from --tables under plain Levenshtein, and first in order).
		{"unknown flag: --tabels", "did you mean --tables?"},
		{"unknown flag: --rte", "did you mean --rate?"},
		{"unknown flag: --zzzzzz", ""},
		{"unknown shorthand flag: 'Z' in -Z", ""},
		{"flag needs an argument: -c", ""},
	} {
		got := FlagHint("run", c.err, names)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("FlagHint(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}

// Every hint names something to do, and no flag fathom takes under the same name is
// in the table (it would never be reached, and would contradict the flag's help).
func TestForeignTable(t *testing.T) {
	taken := []string{"-c", "--clients", "-T", "--time", "-t", "--transactions", "-R", "--rate", "-P", "-L",
		"-M", "-s", "--scale", "--tables", "--table-size", "--threads", "--events", "-j", "-n", "-C", "-l",
		"--log-prefix", "--aggregate-interval", "--sampling-rate", "--max-tries", "--warmup", "--rand-type",
		"-d", "--debug", "-v", "--vacuum-all", "--random-seed", "--verbose-errors", "--failures-detailed",
		"--db-ps-mode", "--rand-seed", "--warmup-time", "--percentile", "--histogram", "--client", "--protocol", "--progress"}
	for _, f := range taken {
		if _, ok := foreign[f]; ok {
			t.Errorf("%s is a fathom flag but has a foreign hint", f)
		}
	}
	for f, h := range foreign {
		if !strings.HasPrefix(f, "-") || len(h) < 20 {
			t.Errorf("%q: hint %q", f, h)
		}
	}
}

func FuzzFlagHint(f *testing.F) {
	for _, s := range []string{"unknown flag: --x", "unknown shorthand flag: 'i' in -i", "unknown shorthand flag: '", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { _ = FlagHint("run", s, []string{"clients"}) })
}
