package mysql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

// RunDirect runs a prepared statement on the connection's socket with its rows
// skipped: a result set of many rows longer than its first read buffer, no rows, a
// write, a server error classified by its number; the session stays in step (what
// the statements did is seen through the driver afterwards), in a transaction too;
// and without allocating once warm. In simple query mode it declines.
func TestRunDirect(t *testing.T) {
	_, c := testConn(t, target.Config{})
	ctx := context.Background()
	tbl := table(t, c, "direct", "id BIGINT PRIMARY KEY, s VARCHAR(300)")
	ins, err := c.Prepare(ctx, fmt.Sprintf("INSERT INTO %s VALUES (?, ?)", tbl))
	if err != nil {
		t.Fatal(err)
	}
	long := []byte(strings.Repeat("x", 300))
	for i := range 200 { // 200 rows of 300 bytes: a 60 KB reply, past the 16 KB buffer
		if ran, err := ins.(*stmt).RunDirect(ctx, []target.Value{target.Int64(int64(i)), target.Text(long)}); !ran || err != nil {
			t.Fatalf("insert %d: ran %v, %v", i, ran, err)
		}
	}
	if n := query(t, c, "SELECT COUNT(*) FROM "+tbl)[0][0]; n != "200" {
		t.Fatalf("%s rows after 200 direct inserts", n)
	}
	sel, err := c.Prepare(ctx, fmt.Sprintf("SELECT id, s FROM %s WHERE id BETWEEN ? AND ?", tbl))
	if err != nil {
		t.Fatal(err)
	}
	st := sel.(*stmt)
	for _, r := range [][2]int64{{0, 199}, {500, 600}, {7, 7}, {0, 199}} {
		if ran, err := st.RunDirect(ctx, []target.Value{target.Int64(r[0]), target.Int64(r[1])}); !ran || err != nil {
			t.Fatalf("select %v: ran %v, %v", r, ran, err)
		}
	}
	// A duplicate key: the server's error, classified, and the session goes on.
	_, err = ins.(*stmt).RunDirect(ctx, []target.Value{target.Int64(7), target.Text(long)})
	wantClass(t, err, target.ClassConstraint, "1062")
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if ran, err := ins.(*stmt).RunDirect(ctx, []target.Value{target.Int64(1000), target.Text(nil)}); !ran || err != nil {
		t.Fatalf("insert in a transaction: ran %v, %v", ran, err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := query(t, c, "SELECT COUNT(*) FROM "+tbl)[0][0]; n != "200" {
		t.Fatalf("%s rows after a rolled back direct insert, want 200", n)
	}
	var res target.Result
	res.Keep = true
	if err := st.Run(ctx, []target.Value{target.Int64(3), target.Int64(5)}, &res); err != nil || res.Rows != 3 || string(res.First[0].Text) != "3" {
		t.Fatalf("the driver after direct runs: %v, %d rows, first %v", err, res.Rows, res.First)
	}
	args := []target.Value{target.Int64(0), target.Int64(199)}
	if n := testing.AllocsPerRun(20, func() { _, _ = st.RunDirect(ctx, args) }); n != 0 {
		t.Errorf("RunDirect: %v allocations per run", n)
	}
	if _, err := st.RunDirect(ctx, args[:1]); err == nil {
		t.Error("RunDirect with one argument for two placeholders did not fail")
	}

	_, u := testConn(t, target.Config{Unprepared: true})
	us, err := u.Prepare(ctx, "SELECT ?")
	if err != nil {
		t.Fatal(err)
	}
	if ran, _ := us.(*stmt).RunDirect(ctx, args[:1]); ran {
		t.Error("RunDirect ran in simple query mode")
	}
}
