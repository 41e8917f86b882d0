package mysql

import (
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// ParseReply takes whatever the server sends, in whatever pieces: it never panics,
// never uses more than it was given, and a finished reply's error is a classified
// *target.Error.
func FuzzParseReply(f *testing.F) {
	ok := []byte{7, 0, 0, 1, 0x00, 0, 0, 2, 0, 0, 0}
	err := append([]byte{23, 0, 0, 1, 0xff, 0x26, 0x04, '#', '2', '3', '0', '0', '0'}, "Duplicate entry"...)
	rs := []byte{1, 0, 0, 1, 1, // one column
		3, 0, 0, 2, 'd', 'e', 'f', // a column definition (content not read)
		3, 0, 0, 3, 0x00, 0x00, 0x05, // a row
		7, 0, 0, 4, 0xfe, 0, 0, 2, 0, 0, 0} // the final OK
	cached := []byte{2, 0, 0, 1, 1, 0, 3, 0, 0, 2, 0x00, 0x00, 0x05, 7, 0, 0, 3, 0xfe, 0, 0, 2, 0, 0, 0}
	text := []byte{1, 0, 0, 1, 1, 3, 0, 0, 2, 'd', 'e', 'f',
		3, 0, 0, 3, 0x02, '4', '2', // a text row: a length-encoded string
		1, 0, 0, 4, 0xfb, // a text row: NULL
		7, 0, 0, 5, 0xfe, 0, 0, 2, 0, 0, 0}
	for _, seed := range [][]byte{ok, err, rs, cached, text, {0, 0, 0, 0}, {0xff, 0xff, 0xff, 0}} {
		f.Add(seed, false, uint8(3), false)
		f.Add(seed, true, uint8(1), false)
		f.Add(seed, false, uint8(2), true)
	}
	// asText: the reply to a query's text (queryExchange), whose rows are text rows.
	f.Fuzz(func(t *testing.T, in []byte, cacheMeta bool, piece uint8, asText bool) {
		c := &conn{t: &Target{mc: mysql.NewConfig()}}
		if asText {
			targettest.FeedPieces(t, &queryExchange{c: c}, in, int(piece), "")
			return
		}
		s := &stmt{c: c, x: exchange{ok: true, cacheMeta: cacheMeta}}
		targettest.FeedPieces(t, s, in, int(piece), "")
	})
}

// A query's reply has text rows, which a prepared statement's parser refuses (its rows
// start with 0x00): read byte by byte, the query's is finished exactly at its last
// byte, without an error; the statement's is a lost connection at the first text row.
func TestQueryReplyTextRows(t *testing.T) {
	in := []byte{1, 0, 0, 1, 1, 3, 0, 0, 2, 'd', 'e', 'f',
		3, 0, 0, 3, 0x02, '4', '2', 1, 0, 0, 4, 0xfb,
		7, 0, 0, 5, 0xfe, 0, 0, 2, 0, 0, 0}
	c := &conn{t: &Target{mc: mysql.NewConfig()}}
	q := &queryExchange{c: c}
	var buf []byte
	for i := range in {
		buf = append(buf, in[i])
		used, done, err := q.ParseReply(buf)
		buf = buf[used:]
		if done != (i == len(in)-1) || err != nil {
			t.Fatalf("query: done %v, %v at byte %d of %d", done, err, i+1, len(in))
		}
	}
	s := &stmt{c: &conn{t: &Target{mc: mysql.NewConfig()}}, x: exchange{ok: true}}
	_, done, err := s.ParseReply(in)
	if !done || target.ClassOf(err) != target.ClassConnection {
		t.Fatalf("statement: done %v, %v; want a lost connection at the text row", done, err)
	}
	// A query's request: COM_QUERY and the text, sequence 0; no arguments.
	q.sql = "SELECT 1"
	req, err := q.AppendRequest(nil, nil)
	if err != nil || string(req) != "\x09\x00\x00\x00\x03SELECT 1" {
		t.Fatalf("request %q, %v", req, err)
	}
	if _, err := q.AppendRequest(nil, []target.Value{{Kind: target.KindInt, Int: 1}}); err == nil {
		t.Fatal("a query's text took an argument")
	}
}

// Replies handed over byte by byte are finished exactly at their last byte, with the
// statement's error for an ERR packet: an OK, an error, a result set with its column
// definitions, and one whose metadata the server left out (MariaDB's cache).
func TestParseReplyPieces(t *testing.T) {
	for _, c := range []struct {
		name      string
		in        []byte
		cacheMeta bool
		code      string
	}{
		{"ok", []byte{7, 0, 0, 1, 0x00, 0, 0, 2, 0, 0, 0}, false, ""},
		{"error", append([]byte{18, 0, 0, 1, 0xff, 0x26, 0x04, '#', '2', '3', '0', '0', '0'}, "Duplicate"...), false, "1062"},
		{"rows", []byte{2, 0, 0, 1, 1, 1, 3, 0, 0, 2, 'd', 'e', 'f', 3, 0, 0, 3, 0x00, 0x00, 0x05, 3, 0, 0, 4, 0x00, 0x00, 0x06, 7, 0, 0, 5, 0xfe, 0, 0, 2, 0, 0, 0}, true, ""},
		{"cached", []byte{2, 0, 0, 1, 1, 0, 3, 0, 0, 2, 0x00, 0x00, 0x05, 7, 0, 0, 3, 0xfe, 0, 0, 2, 0, 0, 0}, true, ""},
	} {
		s := &stmt{c: &conn{t: &Target{mc: mysql.NewConfig()}}, x: exchange{ok: true, cacheMeta: c.cacheMeta}}
		var buf []byte
		for i := range c.in {
			buf = append(buf, c.in[i])
			used, done, err := s.ParseReply(buf)
			buf = buf[used:]
			if done != (i == len(c.in)-1) {
				t.Fatalf("%s: done %v at byte %d of %d (%v)", c.name, done, i+1, len(c.in), err)
			}
			if done {
				got := ""
				if te := (*target.Error)(nil); errors.As(err, &te) {
					got = te.Code
				}
				if got != c.code || (c.code == "") != (err == nil) || len(buf) != 0 {
					t.Errorf("%s: error %v (code %q), %d bytes left", c.name, err, got, len(buf))
				}
			}
		}
	}
}
