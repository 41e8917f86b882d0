package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// A prepare that is killed part-way (SIGKILL, a lost connection, a full disk) leaves
// tables that exist but hold part of their rows, which Setup cannot tell from finished
// ones. So Prepare writes a marker first: one row per table it is about to drop and
// load, in MarkerTable, deleted when every table is loaded (and the table dropped when
// no marker is left). A run finds a marker left for one of its tables with Unfinished.

// MarkerTable holds the markers of prepares in progress or killed.
const MarkerTable = "fathom_prepare"

// Tabled is implemented by workloads that know the names of their tables. Workloads
// that share tables (tpcb and tpcb-select) then see each other's unfinished prepares;
// without it the marker is the workload's name.
type Tabled interface {
	Tables() []string
}

// SelfMarked is implemented by workloads on targets without tables (Redis): their
// Prepare deletes their own record of a finished prepare first and writes it last, so
// Setup tells a killed prepare by its absence, and no marker table is written.
type SelfMarked interface {
	SelfMarked()
}

func selfMarked(wl Workload) bool {
	_, ok := wl.(SelfMarked)
	return ok
}

func markerKeys(wl Workload) []string {
	if t, ok := wl.(Tabled); ok && len(t.Tables()) > 0 {
		return t.Tables()
	}
	return []string{"workload " + wl.Name()}
}

// Prepare runs wl.Prepare between writing its markers and removing them: an error or
// a kill in between leaves them for Unfinished to find. Cleanup, when given, runs
// after the markers are written (it drops what a finished prepare left).
func Prepare(ctx context.Context, t target.Target, wl Workload, cleanup bool, p Progress) error {
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if selfMarked(wl) {
		if cleanup {
			if err := wl.Cleanup(ctx, conn); err != nil {
				return fmt.Errorf("deleting existing keys: %w", err)
			}
		}
		return wl.Prepare(ctx, t, p)
	}
	if err := mark(ctx, t, conn, wl); err != nil {
		return fmt.Errorf("writing the prepare marker %s: %w", MarkerTable, err)
	}
	if cleanup {
		if err := wl.Cleanup(ctx, conn); err != nil {
			return fmt.Errorf("dropping existing tables: %w", err)
		}
	}
	if err := wl.Prepare(ctx, t, p); err != nil {
		return err
	}
	if err := unmark(ctx, t, conn, wl); err != nil {
		return fmt.Errorf("removing the prepare marker %s: %w", MarkerTable, err)
	}
	return nil
}

// sizeOptions are the options that size a workload's data: a marker keeps their values
// so that the line telling how to prepare again gives the same sizes.
var sizeOptions = []string{"scale", "tables", "table_size", "warehouses"}

// markerSizes is wl's size options as a marker keeps them: "k=v k=v", sorted.
func markerSizes(wl Workload) string {
	opts := wl.Options()
	var parts []string
	for _, k := range sizeOptions {
		if v := opts[k]; v != "" && !strings.ContainsAny(v, " =") {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func mark(ctx context.Context, t target.Target, conn target.Conn, wl Workload) error {
	if err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+MarkerTable+
		" (tbl VARCHAR(200) NOT NULL PRIMARY KEY, workload VARCHAR(200) NOT NULL, started_at VARCHAR(40) NOT NULL,"+
		" sizes VARCHAR(200) NOT NULL DEFAULT '')"); err != nil {
		return err
	}
	// A marker table an older fathom made (a prepare of it killed) has no sizes. (SQLite
	// reports a missing column as a plain error, so any error here means add it.)
	if _, err := conn.Query(ctx, "SELECT sizes FROM "+MarkerTable+" WHERE 1 = 0"); err != nil {
		if err2 := conn.Exec(ctx, "ALTER TABLE "+MarkerTable+" ADD COLUMN sizes VARCHAR(200) NOT NULL DEFAULT ''"); err2 != nil {
			return fmt.Errorf("%w (adding the column sizes: %v)", err, err2)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	sizes := markerSizes(wl)
	for _, k := range markerKeys(wl) {
		if _, err := conn.Query(ctx, "DELETE FROM "+MarkerTable+" WHERE tbl = ?", target.Text([]byte(k))); err != nil {
			return err
		}
		if _, err := conn.Query(ctx, "INSERT INTO "+MarkerTable+" (tbl, workload, started_at, sizes) VALUES (?, ?, ?, ?)",
			target.Text([]byte(k)), target.Text([]byte(wl.Name())), target.Text([]byte(now)), target.Text([]byte(sizes))); err != nil {
			return err
		}
	}
	return nil
}

// ClearMarkers removes wl's markers (after its tables are dropped: nothing is left
// incomplete) and those of tables that no longer exist; the marker table goes with the
// last of them. A target without the marker table is left as it is.
func ClearMarkers(ctx context.Context, t target.Target, conn target.Conn, wl Workload) error {
	if selfMarked(wl) {
		return nil
	}
	if q := t.Dialect().TableExistsSQL; q != "" {
		rows, err := conn.Query(ctx, q, target.Text([]byte(MarkerTable)))
		if err != nil {
			return err
		}
		if len(rows) != 1 || len(rows[0]) != 1 || strings.TrimSpace(rows[0][0]) == "0" {
			return nil
		}
	}
	return unmark(ctx, t, conn, wl)
}

func unmark(ctx context.Context, t target.Target, conn target.Conn, wl Workload) error {
	for _, k := range markerKeys(wl) {
		if _, err := conn.Query(ctx, "DELETE FROM "+MarkerTable+" WHERE tbl = ?", target.Text([]byte(k))); err != nil {
			return err
		}
	}
	// Markers of tables that no longer exist (dropped by this prepare's Cleanup, e.g.
	// sbtest2 after a prepare with fewer tables) mark nothing.
	rows, err := conn.Query(ctx, "SELECT tbl FROM "+MarkerTable)
	if err != nil {
		return err
	}
	left := len(rows)
	if q := t.Dialect().TableExistsSQL; q != "" {
		for _, r := range rows {
			if len(r) != 1 || strings.HasPrefix(r[0], "workload ") {
				continue
			}
			n, err := conn.Query(ctx, q, target.Text([]byte(r[0])))
			if err != nil {
				return err
			}
			if len(n) == 1 && len(n[0]) == 1 && strings.TrimSpace(n[0][0]) == "0" {
				if _, err := conn.Query(ctx, "DELETE FROM "+MarkerTable+" WHERE tbl = ?", target.Text([]byte(r[0]))); err != nil {
					return err
				}
				left--
			}
		}
	}
	if left == 0 {
		var d target.Dialect
		return conn.Exec(ctx, d.DropTable(MarkerTable))
	}
	return nil
}

// Unfinished describes a prepare of wl's tables that started and did not finish, or
// returns "" when there is none (or the target cannot say).
func Unfinished(ctx context.Context, t target.Target, conn target.Conn, wl Workload) (string, error) {
	u, err := UnfinishedPrepare(ctx, t, conn, wl)
	return u.Msg, err
}

// unprepared is a prepare that started and did not finish: Msg says which and when,
// Sizes are the size options it was given (SizeOptions), to prepare again with them.
type unprepared struct {
	Msg   string
	Sizes map[string]string
}

// UnfinishedPrepare is Unfinished with the sizes the unfinished prepare was given
// (none from a marker an older fathom wrote).
func UnfinishedPrepare(ctx context.Context, t target.Target, conn target.Conn, wl Workload) (unprepared, error) {
	if selfMarked(wl) {
		return unprepared{}, nil
	}
	if q := t.Dialect().TableExistsSQL; q != "" {
		rows, err := conn.Query(ctx, q, target.Text([]byte(MarkerTable)))
		if err != nil {
			return unprepared{}, err
		}
		if len(rows) != 1 || len(rows[0]) != 1 || strings.TrimSpace(rows[0][0]) == "0" {
			return unprepared{}, nil
		}
	}
	rows, err := conn.Query(ctx, "SELECT tbl, workload, started_at, sizes FROM "+MarkerTable)
	if err != nil { // an older fathom's marker table, without sizes (or no table: asked again)
		rows, err = conn.Query(ctx, "SELECT tbl, workload, started_at, '' FROM "+MarkerTable)
	}
	if err != nil {
		if target.ClassOf(err) == target.ClassUndefined {
			return unprepared{}, nil
		}
		return unprepared{}, err
	}
	keys := markerKeys(wl)
	var tables []string
	var by, at, sizes string
	for _, r := range rows {
		if len(r) != 4 || !slices.Contains(keys, r[0]) {
			continue
		}
		tables = append(tables, strings.TrimPrefix(r[0], "workload "))
		by, at, sizes = r[1], r[2], r[3]
	}
	if len(tables) == 0 {
		return unprepared{}, nil
	}
	slices.Sort(tables)
	u := unprepared{Msg: fmt.Sprintf("a prepare of %s started at %s did not finish: %s may be incomplete", by, at, strings.Join(tables, ", "))}
	for _, kv := range strings.Fields(sizes) {
		if k, v, ok := strings.Cut(kv, "="); ok && slices.Contains(sizeOptions, k) {
			if u.Sizes == nil {
				u.Sizes = map[string]string{}
			}
			u.Sizes[k] = v
		}
	}
	return u, nil
}
