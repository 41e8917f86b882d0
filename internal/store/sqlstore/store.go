// Package sqlstore is the results store's rows in a SQL database through database/sql:
// the one implementation of store.Store's reads and writes that the SQLite and
// PostgreSQL stores share (their schemas are the same). What differs between the two
// is a small Dialect (placeholders, appending to a JSON array, matching a list of ids)
// and the Owners that tell whether the writer of a running run or experiment lives (a
// process check on one machine, or a session lock on the server). Each store keeps
// only what is its own: opening, migrations, locks, connection settings.
package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/fathom-lab/fathom/internal/store"
)

// Dialect is what the SQL of one database kind says differently.
type Dialect struct {
	// Dollar: placeholders are $1, $2 … (PostgreSQL); else ? (SQLite). Queries are
	// written with ? and rewritten once.
	Dollar bool
	// AppendWarning is the expression that is the runs.warnings JSON array with the
	// text parameter ? appended.
	AppendWarning string
	// HasWarning is the condition that runs.warnings holds the text parameter ?.
	HasWarning string
	// IDArray: a list of ids is one array parameter compared with = ANY(?); else it is
	// a JSON array read with json_each.
	IDArray bool
}

// Kind is what a writer owns: a run or an experiment.
type Kind int

const (
	runKind Kind = iota
	ExperimentKind
)

// Owner is the stored writer of a running run or experiment.
type Owner struct {
	ID      int64
	Host    string // "" for runs: the process column names it
	PID     int
	Process string // the process column
}

// Owners tells whether the writers of running runs and experiments live, and keeps
// this process known as the writer of what it creates or resumes.
type Owners interface {
	// Create runs insert (which stores a new run or experiment and returns its id) in
	// a transaction, and makes this process its known writer from the commit on. uuid
	// is the new row's: a Create tried again with the same uuid (an earlier try's
	// acknowledgement was lost) ends what that try left behind (on a network store, a
	// session the server still keeps) and insert finds the row if it was committed.
	Create(ctx context.Context, kind Kind, uuid string, insert func(tx *sql.Tx) (int64, error)) (int64, error)
	// Resume makes this process the writer of experiment id, or says why not.
	Resume(ctx context.Context, id int64) error
	// Release ends this process's writing of id (it finished).
	Release(ctx context.Context, kind Kind, id int64)
	// Gone returns which of owners' writers are gone.
	Gone(ctx context.Context, kind Kind, owners []Owner) (map[int64]bool, error)
}

// Store is a results store in the SQL database db; the SQLite and PostgreSQL stores
// embed it.
type Store struct {
	db     *sql.DB
	path   string
	d      Dialect
	owners Owners
	bound  sync.Map // query text with ? → with $n (values are always parameters, so the texts are few)
}

// New is the store in db, shown as path.
func New(db *sql.DB, path string, d Dialect, owners Owners) *Store {
	return &Store{db: db, path: path, d: d, owners: owners}
}

var _ store.Store = (*Store)(nil)

// Path is where the store is, as the user gave it (without a password).
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// q is query s in the dialect's placeholders (s is written with ?; none of fathom's
// queries has a ? inside a string literal).
func (s *Store) q(query string) string {
	if !s.d.Dollar {
		return query
	}
	if b, ok := s.bound.Load(query); ok {
		return b.(string)
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	s.bound.Store(query, b.String())
	return b.String()
}

// inIDs is the condition that column is one of ids, with its one argument.
func (s *Store) inIDs(column string, ids []int64) (string, any) {
	if s.d.IDArray {
		return column + " = ANY(?)", ids
	}
	return column + " IN (SELECT value FROM json_each(?))", mustJSON(ids)
}

// exec, query and row run query in the dialect's placeholders.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.db.ExecContext(ctx, s.q(query), args...)
}

func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(ctx, s.q(query), args...)
}

func (s *Store) row(ctx context.Context, query string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, s.q(query), args...)
}

// tx is a transaction that runs its queries in the dialect's placeholders.
type tx struct {
	*sql.Tx
	s *Store
}

func (s *Store) begin(ctx context.Context) (tx, error) {
	t, err := s.db.BeginTx(ctx, nil)
	return tx{t, s}, err
}

func (t tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.ExecContext(ctx, t.s.q(query), args...)
}

func (t tx) row(ctx context.Context, query string, args ...any) *sql.Row {
	return t.QueryRowContext(ctx, t.s.q(query), args...)
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

type scanner interface{ Scan(...any) error }
