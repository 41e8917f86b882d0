package suggest

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"tps", "p50", "p95", "p99", "p999", "mean", "errors", "pg_stat_database", "pg_stat_wal", "os_process", "csv", "json"}
	for _, tc := range []struct{ in, want string }{
		{"tsp", "tps"},                          // a transposition
		{"pg_stat_databse", "pg_stat_database"}, // a letter left out
		{"os_proces", "os_process"},             // ditto
		{"OS-PROCESS", "os_process"},            // case and - for _
		{"cvs", "csv"},                          // two edits
		{"erro", "errors"},                      // a prefix
		{"p9", ""},                              // p95, p99 and p50 are as near: no guess
		{"throughput", ""},                      // nothing near
		{"pg_stat", ""},                         // a prefix of two names
		{"json", "json"},                        // known
	} {
		if got := Nearest(tc.in, known); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if h := Hint("tsp", known); h != " (did you mean tps?)" {
		t.Errorf("Hint: %q", h)
	}
	if h := Hint("json", known); h != "" {
		t.Errorf("Hint for a known name: %q", h)
	}
}
