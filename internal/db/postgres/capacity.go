package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/fathom-lab/fathom/internal/target"
)

// FilesPerClient: one socket.
func (Kind) FilesPerClient() uint64 { return 1 }

// ServerRoom is how many more connections the server accepts from this user: its
// connection limit minus the connections reserved for others and those in use.
func (Kind) ServerRoom(ctx context.Context, conn target.Conn) (room int, why, fix string, ok bool) {
	fix = "raise max_connections on the server"
	// Superusers may use the superuser_reserved_connections too; reserved_connections
	// (PostgreSQL 16+) are for roles with pg_use_reserved_connections. A role may
	// have its own CONNECTION LIMIT.
	rows, err := conn.Query(ctx, `SELECT current_setting('max_connections'),
		current_setting('superuser_reserved_connections'),
		coalesce(current_setting('reserved_connections', true), '0'),
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'),
		(SELECT rolsuper FROM pg_roles WHERE rolname = current_user),
		(SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user),
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename = current_user)`)
	if err != nil || len(rows) != 1 || len(rows[0]) != 7 {
		return 0, "", "", false
	}
	r := rows[0]
	max, e1 := strconv.Atoi(r[0])
	su, e2 := strconv.Atoi(r[1])
	res, e3 := strconv.Atoi(r[2])
	used, e4 := strconv.Atoi(r[3])
	roleLimit, e5 := strconv.Atoi(r[5])
	roleUsed, e6 := strconv.Atoi(r[6])
	if errors.Join(e1, e2, e3, e4, e5, e6) != nil {
		return 0, "", "", false
	}
	super := r[4] == "t" || r[4] == "true"
	used-- // the connection asking closes before the clients connect
	room, why = max-su-res-used, fmt.Sprintf("max_connections is %d, %d reserved, %d in use by others", max, su+res, used)
	if super {
		room, why = max-used, fmt.Sprintf("max_connections is %d, %d in use by others", max, used)
	}
	// The setup connection asking is one of the role's own and closes before the
	// clients connect.
	if roleLimit >= 0 && !super && roleLimit-(roleUsed-1) < room {
		room = roleLimit - (roleUsed - 1)
		why = fmt.Sprintf("the role's CONNECTION LIMIT is %d and it has %d other connections", roleLimit, roleUsed-1)
		fix = "raise the role's limit (ALTER ROLE … CONNECTION LIMIT)"
	}
	return room, why, fix, true
}
