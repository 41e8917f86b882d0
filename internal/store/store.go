// Package store is fathom's results database: a SQLite file holding every run with its
// provenance and every interval's counters and encoded histograms. It is written as a
// run goes (one transaction per interval, WAL mode), so a killed process loses at most
// the interval in progress.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// ErrNotFound is wrapped by lookups of runs that do not exist.
var ErrNotFound = errors.New("not found")

// Store is an open results database. It is safe for concurrent use, and several
// processes may write the same file.
type Store struct {
	db   *sql.DB
	path string
}

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	ents, err := migrationFS.ReadDir("migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range ents {
		v, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its version", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{v, e.Name(), string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// SchemaVersion is the newest schema this build knows.
func SchemaVersion() int {
	ms, _ := migrations()
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// Open opens (creating if needed) the store at path and brings its schema up to date.
func Open(path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("store %s: %v", path, err)
		}
	}
	// WAL with synchronous=NORMAL: a committed transaction survives the death of the
	// process (it is in the WAL file); only a power loss may lose the last commits.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %v", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		return fmt.Errorf("store %s is not a fathom results database (%v); use another --store path", s.path, oneLine(err))
	}
	var cur int
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&cur); err != nil {
		return fmt.Errorf("store %s: %v", s.path, oneLine(err))
	}
	if latest := ms[len(ms)-1].version; cur > latest {
		return fmt.Errorf("store %s was written by a newer fathom (schema %d, this one knows %d): upgrade fathom", s.path, cur, latest)
	}
	for _, m := range ms {
		if m.version <= cur {
			continue
		}
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("store %s: %v", s.path, oneLine(err))
		}
		// Another process may have migrated meanwhile: check again inside the lock.
		var again int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&again); err != nil {
			tx.Rollback()
			return fmt.Errorf("store %s: %v", s.path, oneLine(err))
		}
		if again >= m.version {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("store %s: migration %s: %v", s.path, m.name, oneLine(err))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name) VALUES (?, ?)`, m.version, m.name); err != nil {
			tx.Rollback()
			return fmt.Errorf("store %s: %v", s.path, oneLine(err))
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("store %s: %v", s.path, oneLine(err))
		}
	}
	return nil
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
