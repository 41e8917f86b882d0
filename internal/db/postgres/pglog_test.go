package postgres

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fathom-lab/fathom/internal/capture"
)

// TestPGLog reads PostgreSQL's log of every statement: executions with their
// parameters, simple statements with their literals, by process; parse and bind
// lines and other databases' lines are not calls.
func TestPGLog(t *testing.T) {
	log := `2026-11-24 03:07:00.947 UTC [10085] postgres@app LOG:  duration: 0.057 ms  parse P_0: BEGIN;
2026-11-24 03:07:00.948 UTC [10085] postgres@app LOG:  duration: 0.003 ms  execute P_0: BEGIN;
2026-11-24 03:07:00.954 UTC [10085] postgres@app LOG:  duration: 2.149 ms  bind P_1: UPDATE a SET b = b + $1 WHERE aid = $2;
2026-11-24 03:07:00.954 UTC [10085] postgres@app DETAIL:  parameters: $1 = '-4518', $2 = '23952'
2026-11-24 03:07:00.956 UTC [10085] postgres@app LOG:  duration: 1.604 ms  execute P_1: UPDATE a SET b = b + $1 WHERE aid = $2;
2026-11-24 03:07:00.956 UTC [10085] postgres@app DETAIL:  parameters: $1 = '-4518', $2 = NULL
2026-11-24 03:07:00.981 UTC [10085] postgres@app LOG:  duration: 4.356 ms  execute P_6: END;
2026-11-24 03:07:01.343 UTC [10088] postgres@app LOG:  duration: 2.647 ms  statement: SELECT abalance FROM a
	WHERE aid = 113968 AND name = 'it''s';
2026-11-24 03:07:01.344 UTC [10090] postgres@other LOG:  duration: 2.647 ms  statement: SELECT 1 FROM a WHERE aid = 5;
2026-11-24 03:07:02.000 UTC [2212] LOG:  checkpoint complete: wrote 4 buffers
`
	path := filepath.Join(t.TempDir(), "pg.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	ev, src, err := readPGLog(path, capture.Source{Database: "app"})
	if err != nil {
		t.Fatal(err)
	}
	want := []capture.Event{
		{Session: "10085", SQL: "BEGIN", Ms: 0.003},
		{Session: "10085", SQL: "UPDATE a SET b = b + $1 WHERE aid = $2", Values: []string{"-4518", "\x00"}, Ms: 1.604},
		{Session: "10085", SQL: "END", Ms: 4.356},
		{Session: "10088", SQL: "SELECT abalance FROM a WHERE aid = ? AND name = ?", Values: []string{"113968", "it's"}, Ms: 2.647},
	}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("events:\n%+v\nwant\n%+v", ev, want)
	}
	if src.Since.Format("15:04:05.000") != "03:07:00.948" || src.Until.Format("15:04:05.000") != "03:07:01.343" {
		t.Errorf("window %s to %s", src.Since, src.Until)
	}
}
