package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
)

// Host describes the machine a run was driven from.
type Host struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel,omitempty"`
	CPUModel    string `json:"cpu_model,omitempty"`
	CPUs        int    `json:"cpus"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	GoVersion   string `json:"go_version"`
}

// Run is one stored run and its provenance.
type Run struct {
	ID            int64             `json:"id"`
	UUID          string            `json:"uuid"`
	ToolVersion   string            `json:"tool_version"`
	Command       string            `json:"command"`
	Workload      string            `json:"workload"`
	Options       map[string]string `json:"options"`
	Seed          uint64            `json:"seed"`
	TargetKind    string            `json:"target_kind"`
	Target        string            `json:"target"`
	ServerVersion string            `json:"server_version"`
	Settings      map[string]string `json:"settings"`
	Host          Host              `json:"host"`
	Labels        map[string]string `json:"labels"`
	Clients       int               `json:"clients"`
	Rate          float64           `json:"rate"`
	Duration      time.Duration     `json:"duration_ns"`
	Transactions  int64             `json:"transactions"`
	Warmup        time.Duration     `json:"warmup_ns"`
	Interval      time.Duration     `json:"interval_ns"`
	TxnTypes      []string          `json:"txn_types"`
	StartedAt     time.Time         `json:"started_at"`
	EndedAt       time.Time         `json:"ended_at"`
	Status        string            `json:"status"`
	Reason        string            `json:"reason,omitempty"`
	Summary       json.RawMessage   `json:"summary,omitempty"`
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// CreateRun records a new run with status "running" and sets its ID and UUID.
func (s *Store) CreateRun(ctx context.Context, r *Run) (int64, error) {
	if r.UUID == "" {
		r.UUID = newUUID()
	}
	r.Status = "running"
	if r.Options == nil {
		r.Options = map[string]string{}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (uuid, tool_version, command, workload, options, seed, target_kind, target,
		server_version, settings, host, clients, rate, duration_ns, transactions, warmup_ns, interval_ns, txn_types, started_at, status)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.UUID, r.ToolVersion, r.Command, r.Workload, mustJSON(r.Options), int64(r.Seed), r.TargetKind, r.Target,
		r.ServerVersion, mustJSON(r.Settings), mustJSON(r.Host), r.Clients, r.Rate, int64(r.Duration), r.Transactions,
		int64(r.Warmup), int64(r.Interval), mustJSON(r.TxnTypes), r.StartedAt.UTC().UnixNano(), r.Status)
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	for k, v := range r.Labels {
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_labels (run_id, key, value) VALUES (?,?,?)`, id, k, v); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	r.ID = id
	return id, nil
}

// AddInterval stores one interval in one transaction, its histograms in
// measure.EncodeV2's encoding.
func (s *Store) AddInterval(ctx context.Context, runID int64, iv *measure.Interval) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO intervals (run_id, idx, start_ns, end_ns, warmup, reconnects) VALUES (?,?,?,?,?,?)`,
		runID, iv.Index, int64(iv.Start), int64(iv.End), iv.Warmup, iv.Reconnects); err != nil {
		return err
	}
	for i := range iv.Types {
		t := &iv.Types[i]
		errs := map[string]int64{}
		for c, n := range t.Errors {
			if n > 0 {
				errs[target.Class(c).String()] = n
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO interval_types (run_id, idx, type, ok, failed, retries, statements, late, dropped,
			errors, latency, service, failed_latency) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			runID, iv.Index, t.Name, t.OK, t.Failed, t.Retries, t.Statements, t.Late, t.Dropped, mustJSON(errs),
			measure.EncodeV2(t.Latency), measure.EncodeV2(t.Service), measure.EncodeV2(t.FailedLatency)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// FinishRun records how a run ended and its summary.
func (s *Store) FinishRun(ctx context.Context, runID int64, status, reason string, endedAt time.Time, summary json.RawMessage) error {
	var sum any
	if len(summary) > 0 {
		sum = string(summary)
	}
	_, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, reason = ?, ended_at = ?, summary = ? WHERE id = ?`,
		status, reason, endedAt.UTC().UnixNano(), sum, runID)
	return err
}

// MarkAbandoned marks a run left "running" by a process that died.
func (s *Store) MarkAbandoned(ctx context.Context, runID int64, reason string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE runs SET status = 'failed', reason = ? WHERE id = ? AND status = 'running'`, reason, runID)
	return err
}

// RunFilter selects runs.
type RunFilter struct {
	Limit    int // 0 = all
	Labels   map[string]string
	Workload string
	Status   string
}

const runColumns = `id, uuid, tool_version, command, workload, options, seed, target_kind, target, server_version, settings, host,
	clients, rate, duration_ns, transactions, warmup_ns, interval_ns, txn_types, started_at, ended_at, status, reason, summary`

// Runs lists runs matching f, newest first.
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]Run, error) {
	var where []string
	var args []any
	if f.Workload != "" {
		where = append(where, "workload = ?")
		args = append(args, f.Workload)
	}
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	for k, v := range f.Labels {
		where = append(where, "id IN (SELECT run_id FROM run_labels WHERE key = ? AND value = ?)")
		args = append(args, k, v)
	}
	q := "SELECT " + runColumns + " FROM runs"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if err := s.loadLabels(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Run returns one run; the error wraps ErrNotFound if there is none.
func (s *Store) Run(ctx context.Context, id int64) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d %w in %s", id, ErrNotFound, s.path)
	}
	if err != nil {
		return nil, err
	}
	return r, s.loadLabels(ctx, r)
}

// LatestRunID returns the newest run's id.
func (s *Store) LatestRunID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT max(id) FROM runs`).Scan(&id); err != nil {
		return 0, err
	}
	if !id.Valid {
		return 0, fmt.Errorf("no runs in %s yet: %w", s.path, ErrNotFound)
	}
	return id.Int64, nil
}

func (s *Store) loadLabels(ctx context.Context, r *Run) error {
	rows, err := s.db.QueryContext(ctx, `SELECT key, value FROM run_labels WHERE run_id = ? ORDER BY key`, r.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	r.Labels = map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		r.Labels[k] = v
	}
	return rows.Err()
}

type scanner interface{ Scan(...any) error }

func scanRun(sc scanner) (*Run, error) {
	var (
		r                                 Run
		options, settings, host, txnTypes string
		seed, dur, warm, ival, started    int64
		ended                             sql.NullInt64
		summary                           sql.NullString
	)
	err := sc.Scan(&r.ID, &r.UUID, &r.ToolVersion, &r.Command, &r.Workload, &options, &seed, &r.TargetKind, &r.Target,
		&r.ServerVersion, &settings, &host, &r.Clients, &r.Rate, &dur, &r.Transactions, &warm, &ival, &txnTypes,
		&started, &ended, &r.Status, &r.Reason, &summary)
	if err != nil {
		return nil, err
	}
	r.Seed = uint64(seed)
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
			return nil, fmt.Errorf("run %d: corrupt column: %v", r.ID, err)
		}
	}
	return &r, nil
}

// Intervals returns a run's intervals in order, histograms decoded, with the run's
// transaction types in its txn_types order.
func (s *Store) Intervals(ctx context.Context, runID int64) ([]*measure.Interval, error) {
	run, err := s.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	typeIdx := map[string]int{}
	for i, n := range run.TxnTypes {
		typeIdx[n] = i
	}
	rows, err := s.db.QueryContext(ctx, `SELECT idx, start_ns, end_ns, warmup, reconnects FROM intervals WHERE run_id = ? ORDER BY idx`, runID)
	if err != nil {
		return nil, err
	}
	var ivs []*measure.Interval
	byIdx := map[int]*measure.Interval{}
	for rows.Next() {
		var idx int
		var start, end, reconnects int64
		var warm bool
		if err := rows.Scan(&idx, &start, &end, &warm, &reconnects); err != nil {
			rows.Close()
			return nil, err
		}
		iv := measure.NewInterval(idx, run.TxnTypes)
		iv.Start, iv.End, iv.Warmup, iv.Reconnects = time.Duration(start), time.Duration(end), warm, reconnects
		ivs = append(ivs, iv)
		byIdx[idx] = iv
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	trows, err := s.db.QueryContext(ctx, `SELECT idx, type, ok, failed, retries, statements, late, dropped, errors, latency, service, failed_latency
		FROM interval_types WHERE run_id = ?`, runID)
	if err != nil {
		return nil, err
	}
	defer trows.Close()
	for trows.Next() {
		var idx int
		var name, errs string
		var c measure.Counts
		var lat, svc, fl []byte
		if err := trows.Scan(&idx, &name, &c.OK, &c.Failed, &c.Retries, &c.Statements, &c.Late, &c.Dropped, &errs, &lat, &svc, &fl); err != nil {
			return nil, err
		}
		iv, ok := byIdx[idx]
		ti, ok2 := typeIdx[name]
		if !ok || !ok2 {
			continue
		}
		var em map[string]int64
		if err := json.Unmarshal([]byte(errs), &em); err != nil {
			return nil, fmt.Errorf("run %d interval %d: corrupt errors: %v", runID, idx, err)
		}
		for cl := target.Class(0); cl < target.NumClasses; cl++ {
			c.Errors[cl] = em[cl.String()]
		}
		t := &iv.Types[ti]
		t.Counts = c
		if t.Latency, err = measure.Decode(lat); err != nil {
			return nil, fmt.Errorf("run %d interval %d: %v", runID, idx, err)
		}
		if len(svc) > 0 {
			if t.Service, err = measure.Decode(svc); err != nil {
				return nil, fmt.Errorf("run %d interval %d: %v", runID, idx, err)
			}
		}
		if len(fl) > 0 {
			if t.FailedLatency, err = measure.Decode(fl); err != nil {
				return nil, fmt.Errorf("run %d interval %d: %v", runID, idx, err)
			}
		}
	}
	return ivs, trows.Err()
}
