// Package sqlite is fathom's results store in a SQLite file, holding every run with its
// provenance and every interval's counters and encoded histograms. It is written as a
// run goes (one transaction per interval, WAL mode), so a killed process loses at most
// the interval in progress.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Store is the results store in a SQLite file. It is safe for concurrent use, and several
// processes may write the same file.
type Store struct {
	*sqlstore.Store
	db   *sql.DB
	path string
	busy bool // the last error of Open's migration was SQLITE_BUSY
}

// dialect is SQLite's SQL where it differs from PostgreSQL's.
var dialect = sqlstore.Dialect{AppendWarning: `json_insert(warnings, '$[#]', ?)`,
	HasWarning: `EXISTS (SELECT 1 FROM json_each(warnings) WHERE value = ?)`}

var _ store.Store = (*Store)(nil)

// checkOwner refuses, without creating anything, a store path another user could read
// or replace: the file or its -wal, -shm or -journal companion is a symbolic link,
// belongs to another user or is writable by others (errors.Is safefile.ErrUnsafe).
// CheckPath calls it first.
func checkOwner(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		// Only the refusals: a path that cannot be looked at (under a file, say) is
		// explained by CheckPath's own tests.
		if err := safefile.Check(p); errors.Is(err, safefile.ErrUnsafe) {
			return err
		}
	}
	return nil
}

// Open opens (creating if needed) the SQLite store at path and brings its schema
// up to date.
func Open(path string) (*Store, error) {
	if err := CheckPath(path); err != nil {
		return nil, err
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("store %s: %v", path, err)
		}
	}
	// The store holds command lines, settings and hook outputs: it is created private
	// (SQLite gives its -wal and -shm files the database file's mode), and an existing
	// one, or its companions, is used only when it is ours and not writable by others
	// (CheckPath above).
	if err := safefile.Touch(path); err != nil {
		if errors.Is(err, safefile.ErrUnsafe) {
			return nil, err
		}
		return nil, fmt.Errorf("store %s: %v", path, err)
	}
	// WAL with synchronous=NORMAL: a committed transaction survives the death of the
	// process (it is in the WAL file); only a power loss may lose the last commits.
	dsn, err := uri(path, "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("store %s: %v", path, err)
	}
	// Two processes opening a new store at once can meet SQLITE_BUSY in the first
	// statements of a connection (switching the journal to WAL takes an exclusive lock,
	// and SQLite does not always wait for it): the open is tried again, for as long as
	// busy_timeout would wait.
	deadline := time.Now().Add(10 * time.Second)
	for {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("store %s: %v", path, err)
		}
		s := &Store{db: db, path: path}
		err = s.migrate(context.Background())
		if err == nil {
			s.Store = sqlstore.New(db, path, dialect, owners{db})
			return s, nil
		}
		db.Close()
		if !s.busy || time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(time.Duration(10+rand.IntN(40)) * time.Millisecond)
	}
}

// note remembers whether err is SQLITE_BUSY (Open then tries again) and returns it.
func (s *Store) note(err error) error {
	var se interface{ Code() int }
	s.busy = errors.As(err, &se) && se.Code()&0xff == 5 // SQLITE_BUSY
	return err
}

func (s *Store) migrate(ctx context.Context) error {
	ms, err := sqlstore.Migrations(migrationFS)
	if err != nil {
		return err
	}
	// A SQLite database that holds other tables and no schema_version is someone
	// else's: fathom's tables are not added to it.
	var ours, theirs int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE name = 'schema_version'), count(*) FILTER (WHERE name <> 'schema_version')
		FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).Scan(&ours, &theirs); err != nil {
		return s.openError(s.note(err))
	}
	if ours == 0 && theirs > 0 {
		return pathError("store %s is a SQLite database with %d tables of its own but not a fathom results database: give another --store path", s.path, theirs)
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		return s.openError(s.note(err))
	}
	var cur int
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&cur); err != nil {
		return fmt.Errorf("store %s: %v", s.path, oneLine(s.note(err)))
	}
	if latest := ms[len(ms)-1].Version; cur > latest {
		return fmt.Errorf("store %s was written by a newer fathom (schema %d, this one knows %d): upgrade fathom", s.path, cur, latest)
	}
	for _, m := range ms {
		if m.Version <= cur {
			continue
		}
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("store %s: %v", s.path, oneLine(s.note(err)))
		}
		// Another process may have migrated meanwhile: check again inside the lock.
		var again int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&again); err != nil {
			tx.Rollback()
			return fmt.Errorf("store %s: %v", s.path, oneLine(s.note(err)))
		}
		if again >= m.Version {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			tx.Rollback()
			return fmt.Errorf("store %s: migration %s: %v", s.path, m.Name, oneLine(s.note(err)))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name) VALUES (?, ?)`, m.Version, m.Name); err != nil {
			tx.Rollback()
			return fmt.Errorf("store %s: %v", s.path, oneLine(s.note(err)))
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("store %s: %v", s.path, oneLine(s.note(err)))
		}
	}
	return nil
}

// openError explains why the store's file could not be read: damaged, not a database,
// not writable, or something else SQLite says.
func (s *Store) openError(err error) error {
	var se interface{ Code() int }
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // the primary result code
		case 11: // SQLITE_CORRUPT
			return fmt.Errorf("store %s is damaged (%s): restore it from a copy, or give another --store path", s.path, oneLine(err))
		case 26: // SQLITE_NOTADB
			return pathError("store %s is not a SQLite database, so not a fathom results database: give another --store path", s.path)
		case 8, 3: // SQLITE_READONLY, SQLITE_PERM
			return pathError("store %s cannot be written (%s): fix its permissions (and its directory's, for the -wal file) or give another --store path", s.path, oneLine(err))
		case 14: // SQLITE_CANTOPEN
			return pathError("store %s cannot be opened (%s): check the path and its directory's permissions, or give another --store path", s.path, oneLine(err))
		}
	}
	return fmt.Errorf("store %s: %v", s.path, oneLine(err))
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
