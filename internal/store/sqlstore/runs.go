package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// CreateRun records a new run with status "running" and sets its ID and UUID. This
// process is its known writer from the commit until FinishRun.
func (s *Store) CreateRun(ctx context.Context, r *store.Run) (int64, error) {
	if r.UUID == "" {
		r.UUID = newUUID()
	}
	r.Status = "running"
	if r.Options == nil {
		r.Options = map[string]string{}
	}
	proc := store.ThisProcess()
	r.PID = proc.PID
	warnings := r.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	id, err := s.owners.Create(ctx, runKind, r.UUID, func(t *sql.Tx) (int64, error) {
		tx := tx{t, s}
		var id int64
		// The UUID was drawn by the first try of this call: a row that has it already
		// was committed by a try whose acknowledgement was lost (a store that blinked),
		// and is this run, not a second one.
		err := tx.row(ctx, `INSERT INTO runs (uuid, tool_version, command, workload, options, seed, target_kind, target,
		server_version, settings, host, clients, rate, duration_ns, transactions, warmup_ns, interval_ns, txn_types, started_at, status,
		query_mode, max_tries, latency_limit_ns, pid, process, warnings)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (uuid) DO NOTHING RETURNING id`,
			r.UUID, r.ToolVersion, r.Command, r.Workload, mustJSON(r.Options), int64(r.Seed), r.TargetKind, r.Target,
			r.ServerVersion, mustJSON(r.Settings), mustJSON(r.Host), r.Clients, r.Rate, int64(r.Duration), r.Transactions,
			int64(r.Warmup), int64(r.Interval), mustJSON(r.TxnTypes), r.StartedAt.UTC().UnixNano(), r.Status,
			r.QueryMode, r.MaxTries, int64(r.LatencyLimit), proc.PID, proc.String(), mustJSON(warnings)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return s.earlierTry(ctx, tx, r, proc)
		}
		if err != nil {
			return 0, err
		}
		for k, v := range r.Labels {
			if _, err := tx.exec(ctx, `INSERT INTO run_labels (run_id, key, value) VALUES (?,?,?)`, id, k, v); err != nil {
				return 0, err
			}
		}
		return id, nil
	})
	if err != nil {
		return 0, err
	}
	r.ID = id
	return id, nil
}

// earlierTry is the id of the run with r's UUID when an earlier try of this CreateRun
// stored it (same process, same start; its labels went in with it), and an error when
// another run has that UUID.
func (s *Store) earlierTry(ctx context.Context, tx tx, r *store.Run, proc store.Process) (int64, error) {
	var (
		id      int64
		started int64
		process string
	)
	if err := tx.row(ctx, `SELECT id, started_at, process FROM runs WHERE uuid = ?`, r.UUID).Scan(&id, &started, &process); err != nil {
		return 0, err
	}
	if started != r.StartedAt.UTC().UnixNano() || process != proc.String() {
		return 0, fmt.Errorf("store %s already holds run %d with UUID %s, started by %s: a new run gets a new UUID", s.path, id, r.UUID, process)
	}
	return id, nil
}

// AddInterval stores one interval in one transaction, its histograms in
// measure.EncodeV2's encoding.
func (s *Store) AddInterval(ctx context.Context, runID int64, iv *measure.Interval) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// An interval is keyed by (run, index) and written whole in one transaction: one
	// that is there already was written by an earlier try whose acknowledgement was
	// lost (a store that blinked), and is not written twice.
	res, err := tx.exec(ctx, `INSERT INTO intervals (run_id, idx, start_ns, end_ns, warmup, reconnects) VALUES (?,?,?,?,?,?)
		ON CONFLICT (run_id, idx) DO NOTHING`, runID, iv.Index, int64(iv.Start), int64(iv.End), iv.Warmup, iv.Reconnects)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return nil
	}
	for i := range iv.Types {
		t := &iv.Types[i]
		if _, err := tx.exec(ctx, `INSERT INTO interval_types (run_id, idx, type, ok, failed, retries, statements, late, dropped,
			errors, latency, service, failed_latency) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			runID, iv.Index, t.Name, t.OK, t.Failed, t.Retries, t.Statements, t.Late, t.Dropped, errorCounts(&t.Errors),
			measure.EncodeV2(t.Latency), measure.EncodeV2(t.Service), measure.EncodeV2(t.FailedLatency)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// errorCounts is the errors column: a JSON object of the classes that occurred.
func errorCounts(counts *[target.NumClasses]int64) string {
	errs := map[string]int64{}
	for c, n := range counts {
		if n > 0 {
			errs[target.Class(c).String()] = n
		}
	}
	return mustJSON(errs)
}

// FinishRun records how a run ended and its summary; this process no longer writes it.
func (s *Store) FinishRun(ctx context.Context, runID int64, status, reason string, endedAt time.Time, summary json.RawMessage) error {
	var sum any
	if len(summary) > 0 {
		sum = string(summary)
	}
	_, err := s.exec(ctx, `UPDATE runs SET status = ?, reason = ?, ended_at = ?, summary = ? WHERE id = ?`,
		status, reason, endedAt.UTC().UnixNano(), sum, runID)
	if err == nil {
		s.owners.Release(ctx, runKind, runID)
	}
	return err
}

// AddRunWarning appends a one-line warning to a run's stored warnings, unless they
// hold it already: a write tried again after its acknowledgement was lost (a store
// that blinked) does not say it twice.
func (s *Store) AddRunWarning(ctx context.Context, runID int64, warning string) error {
	_, err := s.exec(ctx, `UPDATE runs SET warnings = `+s.d.AppendWarning+` WHERE id = ? AND NOT (`+s.d.HasWarning+`)`, warning, runID, warning)
	return err
}

// MarkAbandoned marks a run left "running" by a process that died.
func (s *Store) MarkAbandoned(ctx context.Context, runID int64, reason string) error {
	_, err := s.exec(ctx, `UPDATE runs SET status = 'failed', reason = ? WHERE id = ? AND status = 'running'`, reason, runID)
	return err
}

const runColumns = `id, uuid, tool_version, command, workload, options, seed, target_kind, target, server_version, settings, host,
	clients, rate, duration_ns, transactions, warmup_ns, interval_ns, txn_types, started_at, ended_at, status, reason, summary,
	query_mode, max_tries, latency_limit_ns, pid, process, warnings`

// Runs lists runs matching f, newest first.
func (s *Store) Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	return s.runs(ctx, f, runColumns, scanRun)
}

// listColumns are the columns of RunList's runs.
const listColumns = `id, uuid, workload, target_kind, clients, rate, started_at, ended_at, status, reason, summary, pid, process`

// RunList lists runs matching f, newest first, with only what a list of runs shows
// (store.RunLister): no provenance to decode, so thousands of runs read quickly.
func (s *Store) RunList(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	return s.runs(ctx, f, listColumns, scanListed)
}

// scanListed reads a row of listColumns, and the run's stored process.
func scanListed(sc scanner) (store.Run, string, error) {
	var (
		r       store.Run
		started int64
		ended   sql.NullInt64
		summary sql.RawBytes
		process string
	)
	if err := sc.Scan(&r.ID, &r.UUID, &r.Workload, &r.TargetKind, &r.Clients, &r.Rate, &started, &ended, &r.Status, &r.Reason,
		&summary, &r.PID, &process); err != nil {
		return r, "", err
	}
	r.StartedAt = time.Unix(0, started).UTC()
	if ended.Valid {
		r.EndedAt = time.Unix(0, ended.Int64).UTC()
	}
	if summary != nil {
		r.Summary = json.RawMessage(bytes.Clone(summary))
	}
	return r, process, nil
}

func (s *Store) runs(ctx context.Context, f store.RunFilter, columns string, scan func(scanner) (store.Run, string, error)) ([]store.Run, error) {
	var where []string
	var args []any
	if f.Workload != "" {
		where = append(where, "workload = ?")
		args = append(args, f.Workload)
	}
	// A run whose writer is gone is stored as running and read as interrupted: the
	// two statuses are told apart after reading.
	derived := f.Status == "running" || f.Status == "interrupted"
	switch {
	case derived:
		where = append(where, "status IN ('running', 'interrupted')")
	case f.Status != "":
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	for k, v := range f.Labels {
		where = append(where, "id IN (SELECT run_id FROM run_labels WHERE key = ? AND value = ?)")
		args = append(args, k, v)
	}
	q := "SELECT " + columns + " FROM runs"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC"
	if f.Limit > 0 && !derived {
		q += " LIMIT ?" // a parameter: the query's text, rewritten once, stays the same
		args = append(args, f.Limit)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	var all []store.Run
	var running []Owner
	for rows.Next() {
		r, process, err := scan(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		if r.Status == "running" {
			running = append(running, Owner{ID: r.ID, PID: r.PID, Process: process})
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	gone, err := s.gone(ctx, runKind, running)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, r := range all {
		if gone[r.ID] {
			r.Status, r.Reason, r.Gone = "interrupted", store.ProcessGone, true
		}
		if derived && r.Status != f.Status {
			continue
		}
		out = append(out, r)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, s.loadLabels(ctx, out)
}

// gone is which of owners' writers are gone.
func (s *Store) gone(ctx context.Context, kind Kind, owners []Owner) (map[int64]bool, error) {
	if len(owners) == 0 {
		return nil, nil
	}
	return s.owners.Gone(ctx, kind, owners)
}

// Run returns one run; the error wraps ErrNotFound if there is none.
func (s *Store) Run(ctx context.Context, id int64) (*store.Run, error) {
	r, process, err := scanRun(s.row(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d %w in %s", id, store.ErrNotFound, s.path)
	}
	if err != nil {
		return nil, err
	}
	if r.Status == "running" {
		gone, err := s.gone(ctx, runKind, []Owner{{ID: r.ID, PID: r.PID, Process: process}})
		if err != nil {
			return nil, err
		}
		if gone[r.ID] {
			r.Status, r.Reason, r.Gone = "interrupted", store.ProcessGone, true
		}
	}
	one := []store.Run{r}
	if err := s.loadLabels(ctx, one); err != nil {
		return nil, err
	}
	return &one[0], nil
}

// LatestRunID returns the newest run's id.
func (s *Store) LatestRunID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := s.row(ctx, `SELECT max(id) FROM runs`).Scan(&id); err != nil {
		return 0, err
	}
	if !id.Valid {
		return 0, fmt.Errorf("no runs in %s yet: %w", s.path, store.ErrNotFound)
	}
	return id.Int64, nil
}

// loadLabels reads the labels of runs in one query.
func (s *Store) loadLabels(ctx context.Context, runs []store.Run) error {
	ids := make([]int64, len(runs))
	pos := make(map[int64]int, len(runs))
	for i := range runs {
		ids[i] = runs[i].ID
		pos[runs[i].ID] = i
		runs[i].Labels = map[string]string{}
	}
	var rows *sql.Rows
	var err error
	switch {
	case len(runs) == 1:
		rows, err = s.query(ctx, `SELECT run_id, key, value FROM run_labels WHERE run_id = ?`, ids[0])
	case len(runs) > 1000:
		// Many runs (a list of all): the whole label table is read faster than it is
		// looked up run by run; the labels of other runs are passed over.
		rows, err = s.query(ctx, `SELECT run_id, key, value FROM run_labels`)
	default:
		in, arg := s.inIDs("run_id", ids)
		rows, err = s.query(ctx, `SELECT run_id, key, value FROM run_labels WHERE `+in, arg)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var k, v string
		if err := rows.Scan(&id, &k, &v); err != nil {
			return err
		}
		if i, ok := pos[id]; ok {
			runs[i].Labels[k] = v
		}
	}
	return rows.Err()
}

// scanRun reads a row of runColumns, and the run's stored process.
func scanRun(sc scanner) (store.Run, string, error) {
	var (
		r                                 store.Run
		options, settings, host, txnTypes string
		seed, dur, warm, ival, started    int64
		llimit                            int64
		ended                             sql.NullInt64
		summary                           sql.NullString
		process, warnings                 string
	)
	err := sc.Scan(&r.ID, &r.UUID, &r.ToolVersion, &r.Command, &r.Workload, &options, &seed, &r.TargetKind, &r.Target,
		&r.ServerVersion, &settings, &host, &r.Clients, &r.Rate, &dur, &r.Transactions, &warm, &ival, &txnTypes,
		&started, &ended, &r.Status, &r.Reason, &summary, &r.QueryMode, &r.MaxTries, &llimit, &r.PID, &process, &warnings)
	if err != nil {
		return r, "", err
	}
	if err := json.Unmarshal([]byte(warnings), &r.Warnings); err != nil {
		return r, "", fmt.Errorf("run %d: corrupt column: %v", r.ID, err)
	}
	r.Seed = uint64(seed)
	r.LatencyLimit = time.Duration(llimit)
	r.Duration, r.Warmup, r.Interval = time.Duration(dur), time.Duration(warm), time.Duration(ival)
	r.StartedAt = time.Unix(0, started).UTC()
	if ended.Valid {
		r.EndedAt = time.Unix(0, ended.Int64).UTC()
	}
	if summary.Valid {
		r.Summary = json.RawMessage(summary.String)
	}
	for _, f := range []struct {
		s string
		v any
	}{{options, &r.Options}, {settings, &r.Settings}, {host, &r.Host}, {txnTypes, &r.TxnTypes}} {
		if err := json.Unmarshal([]byte(f.s), f.v); err != nil {
			return r, "", fmt.Errorf("run %d: corrupt column: %v", r.ID, err)
		}
	}
	return r, process, nil
}
