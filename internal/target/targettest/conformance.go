package targettest

import (
	"context"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

// RowsKeepAffected checks what every target's Stmt.Run reports, in each of Modes: rows
// counted without keeping them; the first row kept as text, in reused buffers; no
// rows; rows affected by UPDATE and DELETE. open returns a connection in a mode and an
// empty table with columns (id INTEGER PRIMARY KEY, v INTEGER).
func RowsKeepAffected(t *testing.T, open func(t *testing.T, cfg target.Config) (target.Conn, string)) {
	for _, m := range Modes {
		t.Run(m.Name, func(t *testing.T) {
			ctx := context.Background()
			c, tb := open(t, m.Cfg)
			MustExec(t, c, "INSERT INTO "+tb+" VALUES (1, 10), (2, 20), (3, 30), (4, NULL)")
			prepare := func(sql string) target.Stmt {
				t.Helper()
				st, err := c.Prepare(ctx, sql)
				if err != nil {
					t.Fatalf("prepare %s: %v", sql, err)
				}
				t.Cleanup(func() { _ = st.Close() })
				return st
			}
			sel := prepare("/* hint */ SELECT id, v FROM " + tb + " WHERE id >= ? ORDER BY id")
			var res target.Result
			if err := sel.Run(ctx, []target.Value{target.Int64(2)}, &res); err != nil {
				t.Fatal(err)
			}
			if res.Rows != 3 || len(res.First) != 0 {
				t.Errorf("without Keep: %+v", res)
			}
			res.Keep = true
			if err := sel.Run(ctx, []target.Value{target.Int64(2)}, &res); err != nil {
				t.Fatal(err)
			}
			if res.Rows != 3 || len(res.First) != 2 || string(res.First[0].Text) != "2" || string(res.First[1].Text) != "20" {
				t.Errorf("with Keep: %+v", res)
			}
			buf := res.First[0].Text
			if err := sel.Run(ctx, []target.Value{target.Int64(3)}, &res); err != nil {
				t.Fatal(err)
			}
			if string(res.First[0].Text) != "3" || &buf[:1][0] != &res.First[0].Text[:1][0] {
				t.Errorf("Keep did not reuse buffers: %+v", res.First)
			}
			if err := sel.Run(ctx, []target.Value{target.Int64(99)}, &res); err != nil {
				t.Fatal(err)
			}
			if res.Rows != 0 || len(res.First) != 0 {
				t.Errorf("no rows: %+v", res)
			}
			keepAll(t, sel, &res)
			upd := prepare("UPDATE " + tb + " SET v = v + 1 WHERE id <= ?")
			if err := upd.Run(ctx, []target.Value{target.Int64(3)}, &res); err != nil {
				t.Fatal(err)
			}
			if res.RowsAffected != 3 || res.Rows != 0 || len(res.First) != 0 {
				t.Errorf("update: %+v", res)
			}
			del := prepare("DELETE FROM " + tb + " WHERE v IS NULL")
			if err := del.Run(ctx, nil, &res); err != nil || res.RowsAffected != 1 {
				t.Errorf("delete: %+v %v", res, err)
			}
		})
	}
}

// keepAll checks Result.KeepAll with sel (SELECT id, v … WHERE id >= ? ORDER BY id over
// rows (2, 20), (3, 30), (4, NULL)): every row kept one after the other, NULL as
// KindNull, and a later result of one row shortens First.
func keepAll(t *testing.T, sel target.Stmt, res *target.Result) {
	t.Helper()
	ctx := context.Background()
	res.KeepAll = true
	defer func() { res.KeepAll = false }()
	if err := sel.Run(ctx, []target.Value{target.Int64(2)}, res); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, v := range res.First {
		all = append(all, string(v.Text))
	}
	if res.Rows != 3 || len(res.First) != 6 || strings.Join(all, ",") != "2,20,3,30,4," || res.First[5].Kind != target.KindNull {
		t.Errorf("with KeepAll: rows %d, kept %q", res.Rows, all)
	}
	if err := sel.Run(ctx, []target.Value{target.Int64(4)}, res); err != nil {
		t.Fatal(err)
	}
	if res.Rows != 1 || len(res.First) != 2 || string(res.First[0].Text) != "4" {
		t.Errorf("with KeepAll, one row: %+v", res)
	}
}

// Transactions checks Begin, Rollback and Commit on c with tb, an empty table with one
// column (id INTEGER PRIMARY KEY): Rollback outside a transaction is harmless, a
// rolled-back insert is gone and a committed one stays.
func Transactions(t *testing.T, c target.Conn, tb string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Rollback(ctx); err != nil {
		t.Fatalf("rollback outside a transaction: %v", err)
	}
	for _, commit := range []bool{false, true} {
		if err := c.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		id := "1"
		if commit {
			id = "2"
		}
		MustExec(t, c, "INSERT INTO "+tb+" VALUES ("+id+")")
		end := c.Rollback
		if commit {
			end = c.Commit
		}
		if err := end(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if rows := Query(t, c, "SELECT id FROM "+tb); len(rows) != 1 || rows[0][0] != "2" {
		t.Errorf("after rollback and commit: %v", rows)
	}
}
