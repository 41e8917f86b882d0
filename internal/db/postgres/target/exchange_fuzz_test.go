package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// ParseReply takes whatever the server sends, in whatever pieces: it never panics,
// never uses more than it was given, and an error (the server's, or a malformed
// message's) is a classified *target.Error that does not show the password.
func FuzzParseReply(f *testing.F) {
	msg := func(ms ...pgproto3.BackendMessage) []byte {
		var b []byte
		for _, m := range ms {
			b, _ = m.Encode(b)
		}
		return b
	}
	ready := &pgproto3.ReadyForQuery{TxStatus: 'I'}
	for _, seed := range [][]byte{
		msg(&pgproto3.BindComplete{}, &pgproto3.DataRow{Values: [][]byte{[]byte("1")}}, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, ready),
		msg(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "40001", Message: "could not serialize access"}, ready),
		msg(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: "password authentication failed for hunter2"}, ready),
		msg(&pgproto3.NoticeResponse{Severity: "NOTICE", Message: "n"}, &pgproto3.EmptyQueryResponse{}, ready),
		{'E', 0, 0, 0, 4, 'Z', 0, 0, 0, 5, 'I'},
		{'E', 0, 0, 0, 5, 'x', 'Z', 0, 0, 0, 5, 'I'},
		{'Z', 0, 0, 0, 3},
		{'?', 0, 0, 0, 4},
	} {
		f.Add(seed, uint8(1))
		f.Add(seed, uint8(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, piece uint8) {
		s := &stmt{c: &conn{t: &Target{pc: &pgconn.Config{Password: "hunter2"}}, pg: &pgconn.PgConn{}}}
		targettest.FeedPieces(t, s, in, int(piece), "hunter2")
	})
}
