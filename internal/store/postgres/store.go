// Package postgres is fathom's results store in a PostgreSQL database, shared by the
// fathom processes of a team: the same records, schema and migrations (numbered alike)
// as the SQLite store, translated where SQL differs. It is opened with a libpq URL
// (postgres://user@host:port/db?sslmode=…); the password comes from the URL, the PG*
// variables or ~/.pgpass, as for targets, and is never stored or shown.
//
// Many writers at once: run and experiment ids are identity columns (each run's UUID is
// its identity across stores); a writer holds a session advisory lock on its run or
// experiment while it runs, so a writer that died on any machine is seen as gone
// (its run reads interrupted) and an experiment is resumed by one process at a time.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/sqlstore"
)

// dialect is PostgreSQL's SQL where it differs from SQLite's.
var dialect = sqlstore.Dialect{
	Dollar:        true,
	AppendWarning: `(warnings::jsonb || jsonb_build_array(?::text))::text`,
	HasWarning:    `warnings::jsonb @> jsonb_build_array(?::text)`,
	IDArray:       true,
}

var _ store.Store = (*Store)(nil)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Advisory lock namespaces (the first key of pg_advisory_lock(int4, int4)); the second
// key is the run's or experiment's id modulo 2^32.
const (
	lockMigrate     = 0x66746d67 // "ftmg"
	lockRun         = 0x66747275 // "ftru"
	lockExperiment  = 0x66746578 // "ftex"
	migrateObjectID = 1
)

// Store is the results store in a PostgreSQL database. It is safe for concurrent use,
// and any number of processes on any number of machines may write it at once.
type Store struct {
	*sqlstore.Store
	db   *sql.DB
	path string // the URL without its password

	mu    sync.Mutex
	held  map[lockKey]*sql.Conn // advisory locks this process holds, each on its own connection
	tags  map[lockKey]string    // the application_name of a held lock's session, for those Create took
	lost  map[lockKey]string    // locks whose session was lost, not yet taken again (their tags)
	close bool
}

type lockKey struct {
	space int32
	id    int64
}

// isURL reports whether value is a PostgreSQL URL (postgres:// or postgresql://, in
// any case).
func isURL(value string) bool {
	l := strings.ToLower(value)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// IsDSN reports whether value names a PostgreSQL store: a URL (IsURL) or a libpq
// key=value string (IsKeyValue).
func IsDSN(value string) bool { return isURL(value) || isKeyValue(value) }

// libpqKey is a libpq connection keyword followed by '=' anywhere in a value.
var libpqKey = regexp.MustCompile(`(?i)(?:^|[\s/\\])(host|hostaddr|port|dbname|user|password|passfile|service|servicefile|sslmode|sslpassword|sslcert|sslkey|sslrootcert|sslnegotiation|application_name|connect_timeout|options|target_session_attrs|load_balance_hosts|channel_binding|require_auth|gssencmode|krbsrvname|keepalives)\s*=`)

// isKeyValue reports whether value is, or could be mistaken for, a libpq key=value
// connection string (host=… dbname=…, service=name): it holds a libpq keyword and
// '=' and no "://". Such a value is never taken as a file name.
func isKeyValue(value string) bool {
	return !strings.Contains(value, "://") && libpqKey.MatchString(value)
}

// Display is value as fathom shows and records it: a URL without its password (in
// the user part or a password= parameter), a key=value string with password= and
// sslpassword= masked. A URL that does not parse shows only its scheme.
func Display(value string) string {
	if !isURL(value) {
		return secret.MaskDSN(value)
	}
	u, err := url.Parse(value)
	if err != nil {
		if i := strings.Index(value, "://"); i > 0 {
			return value[:i] + "://…"
		}
		return "postgres://…"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	changed := false
	for k := range q {
		if strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword") {
			q.Del(k)
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// usage is an error about the --store value itself: it wraps store.ErrPath.
type usage struct{ msg string }

func (e *usage) Error() string        { return e.msg }
func (e *usage) Is(target error) bool { return target == store.ErrPath }

func usagef(format string, args ...any) error { return &usage{fmt.Sprintf(format, args...)} }

// Check refuses, without connecting, a value that cannot name a PostgreSQL store.
func Check(value string) error {
	_, err := parse(value)
	return err
}

func parse(value string) (*pgx.ConnConfig, error) {
	shown := Display(value)
	if i := strings.Index(value, "://"); i > 0 {
		if strings.Count(strings.SplitN(value[i+3:], "/", 2)[0], "@") > 1 {
			return nil, usagef("store %s: more than one '@' before the host: write an '@' in the user or password as %%40", shown)
		}
		value = strings.ToLower(value[:i]) + value[i:] // libpq's parser knows the schemes in lower case only
	}
	cfg, err := pgx.ParseConfig(value)
	if err != nil {
		// pgx's message quotes the value, password and all: only the form is said.
		if !isURL(value) {
			return nil, usagef("store %s: not a valid libpq key=value string (want host=… port=… dbname=… user=…, or service=NAME from ~/.pg_service.conf; quote values with spaces as 'a b'); a file path for a SQLite store cannot hold a libpq keyword and '='", shown)
		}
		return nil, usagef("store %s: not a valid PostgreSQL URL (want postgres://user@host:port/dbname?sslmode=…; percent-encode special characters)", shown)
	}
	if cfg.Database == "" {
		return nil, usagef("store %s names no database: add one, e.g. postgres://user@host/fathom", shown)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "fathom store"
	}
	return cfg, nil
}

// Open connects to the store at value (creating its database if it does not exist and
// the user may) and brings its schema up to date. Errors name the store without its
// password and fit on one line.
func Open(value string) (*Store, error) {
	cfg, err := parse(value)
	if err != nil {
		return nil, err
	}
	s := &Store{path: Display(value), held: map[lockKey]*sql.Conn{}, tags: map[lockKey]string{}, lost: map[lockKey]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*cfg.ConnectTimeout+30*time.Second)
	defer cancel()
	s.db = stdlib.OpenDB(*cfg)
	err = s.db.PingContext(ctx)
	if code(err) == "3D000" { // invalid_catalog_name: the database does not exist
		s.db.Close()
		if err := createDatabase(ctx, cfg); err != nil {
			return nil, fmt.Errorf("store %s: database %q does not exist and could not be created (%s): create it (createdb %s) or give another --store", s.path, cfg.Database, s.oneLine(err), cfg.Database)
		}
		s.db = stdlib.OpenDB(*cfg)
		err = s.db.PingContext(ctx)
	}
	if err != nil {
		s.db.Close()
		return nil, fmt.Errorf("store %s: cannot connect (%s): check the URL and that the server runs; the password comes from the URL, PGPASSWORD or ~/.pgpass", s.path, s.oneLine(err))
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	s.Store = sqlstore.New(s.db, s.path, dialect, owners{s})
	return s, nil
}

// createDatabase creates cfg's database, connecting to the postgres database of the
// same server. Another process creating it at the same time is not an error.
func createDatabase(ctx context.Context, cfg *pgx.ConnConfig) error {
	admin := cfg.Copy()
	admin.Database = "postgres"
	c, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{cfg.Database}.Sanitize())
	if c := code(err); c == "42P04" || c == "23505" { // duplicate_database, or the catalog's unique index in a race
		return nil
	}
	return err
}

// code is err's SQLSTATE, "" when it has none.
func code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Close releases the locks this process holds and closes the store.
func (s *Store) Close() error {
	s.mu.Lock()
	s.close = true
	for k, c := range s.held {
		// Released before the session ends, so that readers never see them a moment
		// longer (a closed session's locks go when the server notices it closed).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = c.ExecContext(ctx, `SELECT pg_advisory_unlock_all()`)
		cancel()
		drop(c)
		delete(s.held, k)
		delete(s.tags, k)
	}
	s.mu.Unlock()
	return s.db.Close()
}

func (s *Store) migrate(ctx context.Context) error {
	ms, err := sqlstore.Migrations(migrationFS)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store %s: %s", s.path, s.oneLine(err))
	}
	defer tx.Rollback()
	// One process migrates at a time; the others wait here, then find it done.
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, lockMigrate, migrateObjectID); err != nil {
		return fmt.Errorf("store %s: %s", s.path, s.oneLine(err))
	}
	// A database that holds other tables and no schema_version is someone else's:
	// fathom's tables are not added to it.
	var ours, theirs int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE tablename = 'schema_version'), count(*) FILTER (WHERE tablename <> 'schema_version')
		FROM pg_tables WHERE schemaname = current_schema()`).Scan(&ours, &theirs); err != nil {
		return fmt.Errorf("store %s: %s", s.path, s.oneLine(err))
	}
	if ours == 0 && theirs > 0 {
		return usagef("store %s holds %d tables of its own but is not a fathom results database: give --store a database of its own (createdb fathom)", s.path, theirs)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version bigint NOT NULL, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return s.migrateError(err)
	}
	var cur int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&cur); err != nil {
		return fmt.Errorf("store %s: %s", s.path, s.oneLine(err))
	}
	if latest := ms[len(ms)-1].Version; cur > latest {
		return fmt.Errorf("store %s was written by a newer fathom (schema %d, this one knows %d): upgrade fathom", s.path, cur, latest)
	}
	for _, m := range ms {
		if m.Version <= cur {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("store %s: migration %s: %s", s.path, m.Name, s.oneLine(err))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			return fmt.Errorf("store %s: %s", s.path, s.oneLine(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store %s: %s", s.path, s.oneLine(err))
	}
	return nil
}

func (s *Store) migrateError(err error) error {
	if code(err) == "42501" { // insufficient_privilege
		return usagef("store %s: the user may not create tables there (%s): grant CREATE on the schema or give another --store", s.path, s.oneLine(err))
	}
	return fmt.Errorf("store %s: %s", s.path, s.oneLine(err))
}

// oneLine is err on one line, without anything that looks like a password.
func (s *Store) oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// lock takes the advisory lock (space, id) on a connection of its own, held until
// unlock or Close: while it is held, readers know the writer lives. errHeld when
// another session holds it.
func (s *Store) lock(ctx context.Context, space int32, id int64) error {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	var ok bool
	if err := c.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1, $2)`, space, int32(uint32(id))).Scan(&ok); err != nil {
		c.Close()
		return err
	}
	if !ok {
		c.Close()
		return errHeld
	}
	return s.hold(space, id, c, "")
}

// relock takes again the advisory lock (space, id) that Create took on a session
// named tag, and lost: on a connection of that name, ending first the session that
// was lost if the server still keeps it (a network cut it did not see), whose lock it
// then waits for.
func (s *Store) relock(ctx context.Context, space int32, id int64, tag string) error {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	if err := endEarlierTries(ctx, c, tag); err != nil {
		drop(c)
		return err
	}
	if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock($1, $2)`, space, int32(uint32(id))); err != nil {
		drop(c)
		return err
	}
	return s.hold(space, id, c, tag)
}

// hold keeps c, whose session holds the advisory lock (space, id), until unlock; tag
// is the session's application_name when Create named it.
func (s *Store) hold(space int32, id int64, c *sql.Conn, tag string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.close {
		drop(c)
		return sql.ErrConnDone
	}
	if old := s.held[lockKey{space, id}]; old != nil {
		drop(old)
	}
	s.held[lockKey{space, id}] = c
	if tag != "" {
		s.tags[lockKey{space, id}] = tag
	} else {
		delete(s.tags, lockKey{space, id})
	}
	return nil
}

var errHeld = errors.New("held by another session")

// drop closes c's session (and so releases its locks) instead of returning it to the
// pool.
func drop(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	c.Close()
}

// unlock releases the advisory lock (space, id) if this process holds it.
func (s *Store) unlock(ctx context.Context, space int32, id int64) {
	s.mu.Lock()
	c := s.held[lockKey{space, id}]
	tag := s.tags[lockKey{space, id}]
	delete(s.held, lockKey{space, id})
	delete(s.tags, lockKey{space, id})
	delete(s.lost, lockKey{space, id})
	s.mu.Unlock()
	if c == nil {
		return
	}
	if _, err := c.ExecContext(ctx, `SELECT pg_advisory_unlock($1, $2)`, space, int32(uint32(id))); err != nil || tag != "" {
		// A session named after its run is not given to other work: a later Create of
		// that UUID would end it.
		drop(c)
		return
	}
	c.Close()
}

// liveHolders returns which of ids have their advisory lock in space held by some
// session: their writer lives.
func (s *Store) liveHolders(ctx context.Context, space int32, ids []int64) (map[int64]bool, error) {
	live := map[int64]bool{}
	if len(ids) == 0 {
		return live, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND classid = $1::bigint::oid AND objsubid = 2`, space)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	held := map[int64]bool{}
	for rows.Next() {
		var o int64
		if err := rows.Scan(&o); err != nil {
			return nil, err
		}
		held[o] = true
	}
	for _, id := range ids {
		if held[int64(uint32(id))] {
			live[id] = true
		}
	}
	return live, rows.Err()
}
