package mysql

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// FilesPerClient: one socket.
func (Kind) FilesPerClient() uint64 { return 1 }

// ServerRoom is how many more connections the server accepts from this user: its
// connection limit minus the connections reserved for others and those in use.
func (Kind) ServerRoom(ctx context.Context, conn target.Conn) (room int, why, fix string, ok bool) {
	fix = "raise max_connections on the server"
	rows, err := conn.Query(ctx, `SELECT @@max_connections, @@max_user_connections,
		(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED')`)
	if err != nil || len(rows) != 1 || len(rows[0]) != 3 {
		return 0, "", "", false
	}
	r := rows[0]
	max, e1 := strconv.Atoi(r[0])
	used, e2 := strconv.Atoi(strings.TrimSpace(r[2]))
	if errors.Join(e1, e2) != nil {
		return 0, "", "", false
	}
	used-- // the connection asking closes before the clients connect
	room, why = max-used, fmt.Sprintf("max_connections is %d, %d in use by others", max, used)
	// @@max_user_connections is the session's per-account limit (the account's
	// MAX_USER_CONNECTIONS, else the global one; 0: none). The connections the account
	// already has are not known without PROCESS, so the limit itself is the room.
	if mu, err := strconv.Atoi(r[1]); err == nil && mu > 0 && mu < room {
		room, why = mu, fmt.Sprintf("the account's max_user_connections is %d", mu)
		fix = "raise the account's MAX_USER_CONNECTIONS (ALTER USER … WITH MAX_USER_CONNECTIONS)"
	}
	return room, why, fix, true
}
