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
	for _, seed := range [][]byte{ok, err, rs, cached, {0, 0, 0, 0}, {0xff, 0xff, 0xff, 0}} {
		f.Add(seed, false, uint8(3))
		f.Add(seed, true, uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, cacheMeta bool, piece uint8) {
		s := &stmt{c: &conn{t: &Target{mc: mysql.NewConfig()}}, x: exchange{ok: true, cacheMeta: cacheMeta}}
		targettest.FeedPieces(t, s, in, int(piece), "")
	})
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
