package sblua_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/sblua"
)

// TestSkippedResults: a script whose text never names rs:fetch_row(), rs.nrows or
// rs.nfields has its prepared statements' rows skipped on the wire (as sysbench's
// oltp scripts, which read none); its events run and count their statements, and
// reaching a result by a computed name stops the client with one line naming the
// file, the line and the fix. The same script naming one of them (in a comment)
// reads its rows, every one counted.
func TestSkippedResults(t *testing.T) {
	tgt := open(t, dbtest.MySQLDatabase(t, "sblua"))
	ctx := context.Background()
	admin, err := tgt.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	_ = admin.Exec(ctx, "DROP TABLE IF EXISTS skipped")
	if err := admin.Exec(ctx, "CREATE TABLE skipped (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(ctx, "DROP TABLE skipped")
	if err := admin.Exec(ctx, "INSERT INTO skipped VALUES (1), (2), (3)"); err != nil {
		t.Fatal(err)
	}
	const body = `
function thread_init()
   con = sysbench.sql.driver():connect()
   st = con:prepare("SELECT id FROM skipped WHERE id <= ?")
   p = st:bind_create(sysbench.sql.type.INT)
   st:bind_param(p)
end
function event()
   p:set(3)
   local rs = st:execute()
   if peek then
      local k = "n" .. "rows"
      if rs[k] ~= 3 then error("rows: " .. tostring(rs[k])) end
   end
end
`
	for _, c := range []struct {
		name, extra, want string
	}{
		{"skipped", "", ""},
		{"skipped and reached", "peek = true\n", "skipped.lua:12: rs.nrows: fathom skipped this result's rows"},
		{"kept", "peek = true -- reads rs.nrows\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "skipped.lua")
			if err := os.WriteFile(path, []byte(strings.TrimPrefix(body, "\n")+c.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			sp, err := sblua.Spec(path)
			if err != nil {
				t.Fatal(err)
			}
			wl, err := sp.New(workload.Params{})
			if err != nil {
				t.Fatal(err)
			}
			w := wl.(*sblua.Workload)
			if err := w.UseTarget(tgt); err != nil {
				t.Fatal(err)
			}
			conn, err := tgt.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			k := w.NewWorker(0, 1)
			if err := k.Bind(ctx, conn); err != nil {
				t.Fatal(err)
			}
			defer k.(workload.Finisher).Finish(ctx)
			for range 3 {
				n, err := k.Do(ctx)
				if c.want != "" {
					if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
						t.Fatalf("event: %v, want one line with %q", err, c.want)
					}
					return
				}
				if err != nil || n != 1 {
					t.Fatalf("event: %d statements, %v", n, err)
				}
			}
		})
	}
}
