package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// Before a run opens its clients' connections, it checks that this process and the
// server can hold them: a client count beyond either is refused in one line, before
// anything is opened or measured (rather than after a minute of connecting and a
// misleading error).

// filesPerClient is how many files one client's connection holds open, as the kind
// says (a socket for a server; the database, its WAL and its shared-memory index for
// SQLite); 1 when it does not say.
func filesPerClient(kind string) uint64 {
	if c, ok := db.Lookup(kind).(db.Capacity); ok {
		return c.FilesPerClient()
	}
	return 1
}

// filesReserved are the files the rest of a run needs: stdio, the results store (3),
// the setup and sampling connections, /proc readers.
const filesReserved = 64

// workloadClients is how many clients a run of wl starts: the workload's groups when it
// has them, otherwise -c.
func workloadClients(wl workload.Workload, clients int) int {
	if g, ok := wl.(workload.Grouped); ok && len(g.Groups()) > 0 {
		n := 0
		for _, grp := range g.Groups() {
			n += grp.Clients
		}
		return n
	}
	return clients
}

// checkOpenFiles refuses a client count this process cannot open files for; limit is
// the process's open-files limit (0: unknown).
func checkOpenFiles(limit uint64, kind string, clients int) error {
	if limit == 0 || clients <= 0 {
		return nil
	}
	need := uint64(clients)*filesPerClient(kind) + filesReserved
	if need <= limit {
		return nil
	}
	most := 0
	if limit > filesReserved {
		most = int((limit - filesReserved) / filesPerClient(kind))
	}
	return errkind.Usagef("%d clients need about %d open files but this process may open %d (ulimit -n): raise the limit (e.g. `ulimit -n %d`, or LimitNOFILE= for a service) or use at most -c %d",
		clients, need, limit, need, most)
}

// checkServerRoom refuses a client count the server will not accept. The setup
// connection is counted as in use; it closes before the clients connect, and the
// sampler's own connection takes its place.
func checkServerRoom(ctx context.Context, conn target.Conn, t target.Target, clients int) error {
	c, ok := db.Lookup(t.Kind()).(db.Capacity)
	if !ok {
		return nil
	}
	room, why, fix, ok := c.ServerRoom(ctx, conn)
	if !ok || clients <= room {
		return nil
	}
	if room > 0 {
		fix += fmt.Sprintf(" or use at most -c %d", room)
	} else {
		fix += " or lower -c"
	}
	return errkind.Usagef("%d clients are more than %s accepts now (%s, room for %d): %s",
		clients, t.Redacted(), why, max(room, 0), fix)
}

// tooManyConnections reports whether err is the server refusing a connection because
// its connection limit is reached (by SQLSTATE or errno, never by message).
func tooManyConnections(err error) bool {
	var te *target.Error
	if !errors.As(err, &te) {
		return false
	}
	switch te.Code {
	case "53300", // PostgreSQL too_many_connections
		"1040", // MySQL ER_CON_COUNT_ERROR
		"1203": // MySQL ER_TOO_MANY_USER_CONNECTIONS
		return true
	}
	return false
}
