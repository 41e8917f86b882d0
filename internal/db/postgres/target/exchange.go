package postgres

import (
	"encoding/binary"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/sock"
)

// A prepared statement is an Exchanger: Bind, Execute and Sync out, and everything up
// to ReadyForQuery back, as Run does through pgconn. The messages are encoded and the
// error response decoded with pgx's pgproto3, the same code pgconn uses.
var _ target.Exchanger = (*stmt)(nil)

// exchange is a Stmt's state for target.Exchanger.
type exchange struct {
	bind   pgproto3.Bind
	failed error // the reply's ErrorResponse, returned at its ReadyForQuery
}

// Socket implements target.Exchanger: only a prepared statement on a connection that
// sock.Blocking made (Linux), after pgconn has nothing buffered or in flight.
func (s *stmt) Socket() (int, bool) {
	if s.sd == nil || !s.c.Alive() {
		return -1, false
	}
	if err := s.c.pg.SyncConn(bg); err != nil {
		return -1, false
	}
	return sock.FD(s.c.pg.Conn())
}

var (
	execute = pgproto3.Execute{}
	syncMsg = pgproto3.Sync{}
)

// AppendRequest implements target.Exchanger.
func (s *stmt) AppendRequest(dst []byte, args []target.Value) ([]byte, error) {
	if s.sd == nil {
		return dst, target.Errorf(target.ClassOther, "", "statement is not prepared")
	}
	if len(args) != s.nIn {
		return dst, target.Errorf(target.ClassOther, "", "statement has %d placeholders but %d arguments were given", s.nIn, len(args))
	}
	for i := range args {
		p := appendParam(s.buf[i], &args[i])
		if args[i].Kind != target.KindText {
			s.buf[i] = p
		}
		s.params[i] = p
	}
	s.x.bind.PreparedStatement, s.x.bind.Parameters = s.sd.Name, s.params
	dst, err := s.x.bind.Encode(dst)
	clear(s.params)
	if err != nil {
		return dst, target.Errorf(target.ClassOther, "", "%v", err)
	}
	dst, _ = execute.Encode(dst)
	dst, _ = syncMsg.Encode(dst)
	return dst, nil
}

// ParseReply implements target.Exchanger. Rows are counted by nobody: a workload
// that runs this way does not look at them.
func (s *stmt) ParseReply(src []byte) (int, bool, error) {
	used := 0
	for len(src)-used >= 5 {
		typ := src[used]
		n := int(binary.BigEndian.Uint32(src[used+1:]))
		if n < 4 {
			return used, true, s.Lost(errors.New("malformed message from the server"))
		}
		if len(src)-used < 1+n {
			break
		}
		body := src[used+5 : used+1+n]
		used += 1 + n
		switch typ {
		case 'Z': // ReadyForQuery
			err := s.x.failed
			s.x.failed = nil
			return used, true, err
		case 'E':
			var er pgproto3.ErrorResponse
			if err := er.Decode(body); err != nil {
				return used, true, s.Lost(err)
			}
			s.x.failed = s.c.fail(pgconn.ErrorResponseToPgError(&er), "")
		case '2', 'D', 'C', 'I', 'N', 'S', 'A', 'n', 's':
			// BindComplete, DataRow, CommandComplete, EmptyQueryResponse, notices,
			// parameter changes, notifications, NoData, PortalSuspended
		default:
			return used, true, s.Lost(errors.New("unexpected message " + string(rune(typ)) + " from the server"))
		}
	}
	return used, false, nil
}

// Lost implements target.Exchanger.
func (s *stmt) Lost(err error) error {
	s.c.dead.Store(true)
	e := classify(err, "", s.c.t.pc.Password, true)
	e.Class = target.ClassConnection
	return e
}

// Exchanges implements target.Exchanging: prepared statements on blocking sockets.
func (t *Target) Exchanges() bool { return !t.cfg.Unprepared && !t.cfg.PollerSockets }
