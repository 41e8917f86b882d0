package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// DefaultHeartbeatTable is where `fathom heartbeat` writes and the replication-lag
// check reads.
const DefaultHeartbeatTable = "fathom_heartbeat"

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,63}(\.[A-Za-z_][A-Za-z0-9_$]{0,63})?$`)

func checkTableName(s string) error {
	if !tableName.MatchString(s) {
		return fmt.Errorf("heartbeat table %q: use a plain name like fathom_heartbeat or schema.fathom_heartbeat", s)
	}
	return nil
}

// Heartbeat writes a timestamp row for its server, again and again, on a primary, as
// pt-heartbeat --update does. Replicas receive the row through replication, so the
// age of the row on a replica is how far it is behind, whatever its threads say.
//
// The row is keyed by the primary's id (MySQL @@server_id; PostgreSQL's
// system_identifier, which its physical standbys share) and stamped with the
// primary's clock in UTC; the lag check compares it with the replica's clock, so both
// servers' clocks must be synchronised (NTP), as with pt-heartbeat.
type Heartbeat struct {
	Target   target.Target
	Dialect  *Dialect      // the target kind's (db.CheckOf); nil: the kind has none
	Table    string        // default fathom_heartbeat
	ServerID int64         // 0: the server's own id
	Interval time.Duration // between writes (default 1s)
	// Log receives one line per event worth telling (start, failure, recovery).
	Log func(string)

	id   int64
	host string
}

func (h *Heartbeat) logf(format string, args ...any) {
	if h.Log != nil {
		h.Log(fmt.Sprintf(format, args...))
	}
}

// Prepare validates the settings.
func (h *Heartbeat) Prepare() error {
	if h.Table == "" {
		h.Table = DefaultHeartbeatTable
	}
	if h.Interval <= 0 {
		h.Interval = time.Second
	}
	if h.Interval < 10*time.Millisecond {
		return errors.New("the heartbeat interval must be at least 10ms")
	}
	if h.ServerID < 0 {
		return errors.New("--server-id cannot be negative")
	}
	if h.Dialect == nil || h.Dialect.HeartbeatDDL == nil {
		return fmt.Errorf("fathom heartbeat works with PostgreSQL and MySQL/MariaDB targets, not %s", h.Target.Kind())
	}
	h.host, _ = os.Hostname()
	return checkTableName(h.Table)
}

// setup creates the table if needed and finds the server id.
func (h *Heartbeat) setup(ctx context.Context, conn target.Conn) error {
	ddl, idq := h.Dialect.HeartbeatDDL(h.Table), h.Dialect.ServerID
	if err := conn.Exec(ctx, ddl); err != nil {
		if noDatabase(err) {
			return fmt.Errorf("no database selected: put one in the DSN (mysql://user@host/monitoring) or give --table monitoring.%s", h.Table)
		}
		return fmt.Errorf("creating the heartbeat table %s: %w", h.Table, err)
	}
	h.id = h.ServerID
	if h.id == 0 {
		rows, err := conn.Query(ctx, idq)
		if err != nil {
			return fmt.Errorf("reading the server id: %w", err)
		}
		if len(rows) == 1 && len(rows[0]) == 1 {
			h.id, _ = strconv.ParseInt(rows[0][0], 10, 64)
		}
		if h.id == 0 {
			return errors.New("the server has no server id (MySQL: set server_id, which replication needs anyway; or give --server-id)")
		}
	}
	return nil
}

// ID is the server id the heartbeat writes (after Setup).
func (h *Heartbeat) ID() int64 { return h.id }

// beat writes one heartbeat.
func (h *Heartbeat) beat(ctx context.Context, conn target.Conn) error {
	ms := target.Int64(h.Interval.Milliseconds())
	host := target.Text([]byte(h.host))
	id := target.Int64(h.id)
	return h.Dialect.Beat(ctx, conn, h.Table, id, ms, host)
}

// Run connects, sets up and writes a heartbeat every Interval until ctx is done. A
// lost connection is retried with backoff for as long as it takes; a mistake that
// retrying cannot fix (no privilege, read-only server at start) returns at once.
// With once set it writes one heartbeat and returns.
func (h *Heartbeat) Run(ctx context.Context, once bool) error {
	var conn target.Conn
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	backoff := h.Interval
	failing := false
	setupDone := false
	tick := time.NewTicker(h.Interval)
	defer tick.Stop()
	for {
		err := func() error {
			if conn == nil || !conn.Alive() {
				if conn != nil {
					_ = conn.Close()
					conn = nil
				}
				c, err := h.Target.Connect(ctx)
				if err != nil {
					return err
				}
				conn = c
				if err := h.setup(ctx, conn); err != nil {
					return err
				}
				if !setupDone && !once {
					h.logf("writing a heartbeat for server id %d to %s every %s", h.id, h.Table, h.Interval)
				}
				setupDone = true
			}
			return h.beat(ctx, conn)
		}()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			cls := target.ClassOf(err)
			if !setupDone && cls != target.ClassConnection && cls != target.ClassTimeout {
				return err // a mistake, not an outage
			}
			if once {
				return err
			}
			if !failing {
				h.logf("heartbeat failed, retrying: %s", OneLine(err.Error()))
			}
			failing = true
			if conn != nil && !conn.Alive() {
				_ = conn.Close()
				conn = nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		if failing {
			h.logf("heartbeat written again")
			failing = false
		}
		backoff = h.Interval
		if once {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
