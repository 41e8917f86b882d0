package mysql

import (
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"math"
	"reflect"

	"github.com/go-sql-driver/mysql"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/sock"
)

// A prepared statement is an Exchanger: one COM_STMT_EXECUTE packet out, and the
// whole reply back (an OK or ERR packet, or a binary result set up to its final OK
// packet), as Run does through go-sql-driver/mysql. Two things the driver keeps to
// itself are read with reflect when the statement is prepared: the statement's id on
// the server and the capabilities the connection negotiated. If either cannot be read
// (another driver version), or the connection did not negotiate CLIENT_DEPRECATE_EOF
// (servers older than MySQL 5.7 and MariaDB 10.2), the statement is not an Exchanger
// that can be used and runs through the driver as before.
var _ target.Exchanger = (*stmt)(nil)

// Protocol constants (MySQL client/server protocol; MariaDB's extended capability).
const (
	comQuery           = 0x03
	comStmtExecute     = 0x17
	capDeprecateEOF    = 1 << 24 // CLIENT_DEPRECATE_EOF
	extCapCacheMeta    = 1 << 4  // MARIADB_CLIENT_CACHE_METADATA, among the extended flags
	serverMoreResults  = 0x0008  // SERVER_MORE_RESULTS_EXISTS
	maxPacket          = 0xffffff
	typeDouble         = 0x05
	typeNull           = 0x06
	typeLongLong       = 0x08
	typeString         = 0xfe
	exchangeRowsHeader = 0x00
)

// exchange is a Stmt's state for target.Exchanger.
type exchange struct {
	id        uint32
	ok        bool // id and capabilities were read, and the reply format is known
	cacheMeta bool // a column count is followed by a metadata-follows byte
	phase     uint8
	columns   uint64 // column definitions still to skip
	cont      bool   // the next packet continues a packet of maxPacket bytes
	failed    error  // an ERR packet inside a result set, returned at its end
}

const (
	phaseHeader  = iota // OK, ERR or a column count
	phaseColumns        // column definitions
	phaseRows           // binary rows up to the terminating OK (0xfe) packet
)

// The driver version the reflection below was written and checked against:
// TestDriverInternals fails naming it when an upgrade moves a field. Update it with
// go.mod once that test passes.
const mysqlDriverWrittenFor = "github.com/go-sql-driver/mysql v1.10.1"

// prepareExchange reads what the exchange needs from the driver's statement and
// connection.
func (s *stmt) prepareExchange(dc driver.Conn, ds driver.Stmt) {
	id, ok1 := unexportedUint(ds, "id")
	caps, ok2 := unexportedUint(dc, "capabilities")
	ext, ok3 := unexportedUint(dc, "extCapabilities")
	s.x = exchange{id: uint32(id), ok: ok1 && ok2 && ok3 && caps&capDeprecateEOF != 0, cacheMeta: ext&extCapCacheMeta != 0}
}

// unexportedUint reads the unsigned integer field name of the struct p points to.
func unexportedUint(p any, name string) (uint64, bool) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0, false
	}
	f := v.Elem().FieldByName(name)
	if !f.IsValid() {
		return 0, false
	}
	switch f.Kind() {
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return f.Uint(), true
	}
	return 0, false
}

// Socket implements target.Exchanger: only a prepared statement whose reply format is
// known, on a connection that sock.Blocking made (Linux) without TLS.
func (s *stmt) Socket() (int, bool) {
	if s.ds == nil || !s.x.ok || !s.c.t.Exchanges() || !s.c.Alive() {
		return -1, false
	}
	return sock.FD(s.c.nc)
}

// Exchanges implements target.Exchanging: prepared statements over connections that
// are not encrypted (TLS would stand between the socket and the packets).
func (t *Target) Exchanges() bool {
	return !t.cfg.Unprepared && !t.cfg.PollerSockets && (t.mc.TLSConfig == "" || t.mc.TLSConfig == "false")
}

// AppendRequest implements target.Exchanger: a COM_STMT_EXECUTE packet with the
// arguments bound in the binary protocol, their types sent every time. Times are sent
// as text in the connection's time zone, as the driver sends them.
func (s *stmt) AppendRequest(dst []byte, args []target.Value) ([]byte, error) {
	if s.ds == nil || !s.x.ok {
		return dst, target.Errorf(target.ClassOther, "", "statement is not prepared")
	}
	if len(args) != s.nIn {
		return dst, target.Errorf(target.ClassOther, "", "statement has %d placeholders but %d arguments were given", s.nIn, len(args))
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, comStmtExecute) // length filled in below, sequence 0
	dst = binary.LittleEndian.AppendUint32(dst, s.x.id)
	dst = append(dst, 0)                           // no cursor
	dst = binary.LittleEndian.AppendUint32(dst, 1) // iteration count
	if n := len(args); n > 0 {
		nulls := len(dst)
		for range (n + 7) / 8 {
			dst = append(dst, 0)
		}
		dst = append(dst, 1) // types follow
		for i := range args {
			typ := byte(typeString)
			switch args[i].Kind {
			case target.KindNull:
				typ = typeNull
				dst[nulls+i/8] |= 1 << (i % 8)
			case target.KindInt:
				typ = typeLongLong
			case target.KindFloat:
				typ = typeDouble
			}
			dst = append(dst, typ, 0)
		}
		for i := range args {
			a := &args[i]
			switch a.Kind {
			case target.KindInt:
				dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Int))
			case target.KindFloat:
				dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.Float))
			case target.KindText:
				dst = appendLenEnc(dst, uint64(len(a.Text)))
				dst = append(dst, a.Text...)
			case target.KindTime:
				var b [40]byte
				t := b[:0]
				if a.Time.IsZero() {
					t = append(t, "0000-00-00"...)
				} else {
					t = appendTime(t, a.Time.In(s.c.t.mc.Loc))
				}
				dst = appendLenEnc(dst, uint64(len(t)))
				dst = append(dst, t...)
			}
		}
	}
	n := len(dst) - start - 4
	if n >= maxPacket {
		return dst[:start], target.Errorf(target.ClassOther, "", "statement arguments of %d bytes do not fit one packet", n)
	}
	dst[start], dst[start+1], dst[start+2] = byte(n), byte(n>>8), byte(n>>16)
	return dst, nil
}

// appendLenEnc appends a length-encoded integer.
func appendLenEnc(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}

// readLenEnc reads a length-encoded integer at the start of b; ok is false if b is
// too short.
func readLenEnc(b []byte) (n uint64, size int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	switch b[0] {
	case 0xfc:
		if len(b) >= 3 {
			return uint64(binary.LittleEndian.Uint16(b[1:])), 3, true
		}
	case 0xfd:
		if len(b) >= 4 {
			return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4, true
		}
	case 0xfe:
		if len(b) >= 9 {
			return binary.LittleEndian.Uint64(b[1:]), 9, true
		}
	case 0xfb, 0xff:
		return 0, 1, false
	default:
		return uint64(b[0]), 1, true
	}
	return 0, 0, false
}

// ParseReply implements target.Exchanger. Rows are counted by nobody: a workload
// that runs this way does not look at them.
func (s *stmt) ParseReply(src []byte) (int, bool, error) { return s.x.parse(src, s.c, true) }

// parse consumes a reply on c from src: binary rows (a prepared statement's) or text
// rows (a query's).
func (x *exchange) parse(src []byte, c *conn, binaryRows bool) (int, bool, error) {
	used := 0
	for len(src)-used >= 4 {
		n := int(src[used]) | int(src[used+1])<<8 | int(src[used+2])<<16
		if len(src)-used < 4+n {
			break
		}
		p := src[used+4 : used+4+n]
		used += 4 + n
		cont := x.cont
		x.cont = n == maxPacket
		if cont { // the rest of a long row or column definition
			continue
		}
		if n == 0 {
			return used, true, x.lost(c, errors.New("empty packet from the server"))
		}
		switch x.phase {
		case phaseHeader:
			switch p[0] {
			case 0x00: // OK: no result set
				if more, ok := okStatus(p); !ok {
					return used, true, x.lost(c, errors.New("malformed OK packet from the server"))
				} else if more {
					continue
				}
				return used, true, x.finish()
			case 0xff:
				x.failed = errPacket(c, p)
				return used, true, x.finish()
			}
			cols, size, ok := readLenEnc(p)
			if !ok || cols == 0 {
				return used, true, x.lost(c, errors.New("malformed result set header from the server"))
			}
			x.columns, x.phase = cols, phaseColumns
			if binaryRows && x.cacheMeta && (len(p) <= size || p[size] == 0) { // metadata skipped
				x.columns, x.phase = 0, phaseRows
			}
		case phaseColumns:
			if x.columns--; x.columns == 0 {
				x.phase = phaseRows
			}
		case phaseRows:
			switch {
			case p[0] == 0xfe && n < maxPacket: // the OK packet that ends the result set
				more, ok := okStatus(p)
				if !ok {
					return used, true, x.lost(c, errors.New("malformed OK packet from the server"))
				}
				x.phase = phaseHeader
				if more {
					continue
				}
				return used, true, x.finish()
			case p[0] == 0xff:
				x.failed = errPacket(c, p)
				x.phase = phaseHeader
				return used, true, x.finish()
			case !binaryRows || p[0] == exchangeRowsHeader:
				// a row: a text row starts with a length-encoded string, which is
				// never 0xff and is 0xfe only in a packet of maxPacket bytes
			default:
				return used, true, x.lost(c, errors.New("unexpected packet in a result set from the server"))
			}
		}
	}
	return used, false, nil
}

// finish ends a reply: the state is reset for the next request and the statement's
// error, if any, returned.
func (x *exchange) finish() error {
	err := x.failed
	x.failed, x.phase, x.columns, x.cont = nil, phaseHeader, 0, false
	return err
}

// okStatus reads an OK packet (header 0x00 or 0xfe): whether more results follow.
func okStatus(p []byte) (more, ok bool) {
	i := 1
	for range 2 { // affected rows, last insert id
		_, size, ok := readLenEnc(p[i:])
		if !ok {
			return false, false
		}
		i += size
	}
	if len(p) < i+2 {
		return false, false
	}
	return binary.LittleEndian.Uint16(p[i:])&serverMoreResults != 0, true
}

// errPacket turns an ERR packet into the statement's classified error, as the driver
// would report it.
func errPacket(c *conn, p []byte) error {
	me := &mysql.MySQLError{}
	if len(p) >= 3 {
		me.Number = binary.LittleEndian.Uint16(p[1:])
		msg := p[3:]
		if len(msg) >= 6 && msg[0] == '#' {
			copy(me.SQLState[:], msg[1:6])
			msg = msg[6:]
		}
		me.Message = string(msg)
	}
	return c.fail(me, "")
}

// Lost implements target.Exchanger.
func (s *stmt) Lost(err error) error { return s.x.lost(s.c, err) }

// lost marks c dead after err and resets the exchange.
func (x *exchange) lost(c *conn, err error) error {
	c.dead.Store(true)
	e := classify(err, "", c.t.mc.Passwd)
	e.Class = target.ClassConnection
	x.failed, x.phase, x.columns, x.cont = nil, phaseHeader, 0, false
	return e
}

// queryExchange is a statement's text as a target.Exchanger on its connection
// (Conn.QueryExchanger): one COM_QUERY packet out, the reply walked with its text rows
// skipped.
type queryExchange struct {
	c   *conn
	sql string
	x   exchange
}

// capQueryAttributes: with CLIENT_QUERY_ATTRIBUTES negotiated (MySQL 8.0.23 and
// later, when a client asks) a COM_QUERY carries a parameter count first.
const capQueryAttributes = 1 << 27

// QueryExchanger implements target.QueryExchanging: on a connection whose prepared
// statements are exchanged (no TLS, CLIENT_DEPRECATE_EOF negotiated) and a text that
// fits one packet.
func (c *conn) QueryExchanger(sql string) (target.Exchanger, bool) {
	if c.qcaps == 0 {
		c.qcaps = -1
		caps, ok := unexportedUint(c.dc, "capabilities")
		if ok && caps&capDeprecateEOF != 0 && caps&capQueryAttributes == 0 && c.t.Exchanges() {
			c.qcaps = 1
		}
	}
	if c.qcaps < 0 || len(sql)+1 >= maxPacket {
		return nil, false
	}
	c.qx.c, c.qx.sql = c, sql
	return &c.qx, true
}

// Socket implements target.Exchanger.
func (q *queryExchange) Socket() (int, bool) {
	if !q.c.Alive() {
		return -1, false
	}
	return sock.FD(q.c.nc)
}

// AppendRequest implements target.Exchanger: a COM_QUERY packet; a text takes no
// arguments.
func (q *queryExchange) AppendRequest(dst []byte, args []target.Value) ([]byte, error) {
	if len(args) != 0 {
		return dst, target.Errorf(target.ClassOther, "", "a query's text takes no arguments (%d given)", len(args))
	}
	n := len(q.sql) + 1
	dst = append(dst, byte(n), byte(n>>8), byte(n>>16), 0, comQuery)
	return append(dst, q.sql...), nil
}

// ParseReply implements target.Exchanger.
func (q *queryExchange) ParseReply(src []byte) (int, bool, error) { return q.x.parse(src, q.c, false) }

// Lost implements target.Exchanger.
func (q *queryExchange) Lost(err error) error { return q.x.lost(q.c, err) }
