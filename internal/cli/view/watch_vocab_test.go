package view

import (
	"testing"

	"github.com/fathom-lab/fathom/internal/db"
)

// Every watch column reads declared metrics.
func TestWatchColumnsDeclared(t *testing.T) {
	vocab, err := db.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	all := map[string][]watchColumn{"os": hostColumns}
	for _, k := range db.Names() {
		all[k] = db.WatchColumnsOf(k)
	}
	if len(all["postgres"]) == 0 || len(all["mysql"]) == 0 || len(all["redis"]) == 0 {
		t.Fatalf("a server kind has no watch columns")
	}
	for src, cols := range all {
		for _, c := range cols {
			for _, n := range c.Metrics {
				if !vocab.Declared(n) {
					t.Errorf("%s column %q: %s is not a declared metric", src, c.Head, n)
				}
			}
		}
	}
}
