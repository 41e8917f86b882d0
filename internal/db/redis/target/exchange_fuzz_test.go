package redis

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// newTestExchange is an Exchange waiting for replies to n commands, with no connection.
func newTestExchange(n int) *exchange {
	b := &batch{}
	for range n {
		b.Cmd("PING").End()
	}
	x := (&Conn{t: &redisTarget{d: dsn{password: "hunter2"}}}).Exchange(b).(*exchange)
	x.AppendRequest(nil, nil)
	return x
}

// RESP2 and RESP3 replies handed over byte by byte are finished exactly at the last
// byte of the last expected reply, with the first error reply as the error and nulls
// counted; a push message between them is not a reply.
func TestParseReplyPieces(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      string
		replies int
		nils    int
		code    string
	}{
		{"simple", "+OK\r\n", 1, 0, ""},
		{"integer and bulk", ":5\r\n$3\r\nabc\r\n", 2, 0, ""},
		{"bulk holding CRLF", "$4\r\na\r\nb\r\n", 1, 0, ""},
		{"empty bulk", "$0\r\n\r\n", 1, 0, ""},
		{"nulls", "$-1\r\n*-1\r\n_\r\n", 3, 3, ""},
		{"nested", "*2\r\n*2\r\n:1\r\n$1\r\nx\r\n%1\r\n+k\r\n~2\r\n,1.5\r\n#t\r\n", 1, 0, ""},
		{"array holding a null", "*2\r\n$1\r\na\r\n_\r\n", 1, 0, ""},
		{"map", "%2\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\ng\r\n:2\r\n", 1, 0, ""},
		{"big number, verbatim", "(12345678901234567890\r\n=7\r\ntxt:abc\r\n", 2, 0, ""},
		{"errors", ":1\r\n-WRONGTYPE Operation against a key\r\n-ERR unknown command 'X'\r\n", 3, 0, "WRONGTYPE"},
		{"blob error", "!21\r\nSYNTAX invalid syntax\r\n", 1, 0, "SYNTAX"},
		{"push between", ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n+OK\r\n", 1, 0, ""},
		{"attribute before", "|1\r\n+ttl\r\n:3\r\n:7\r\n", 1, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := newTestExchange(c.replies)
			var buf []byte
			for i := 0; i < len(c.in); i++ {
				buf = append(buf, c.in[i])
				used, done, err := x.ParseReply(buf)
				buf = buf[used:]
				if done != (i == len(c.in)-1) {
					t.Fatalf("done %v after byte %d of %d (err %v)", done, i+1, len(c.in), err)
				}
				if !done {
					continue
				}
				if len(buf) != 0 {
					t.Fatalf("%d bytes left over", len(buf))
				}
				var te *target.Error
				switch {
				case c.code == "" && err != nil:
					t.Fatalf("error %v", err)
				case c.code != "" && (!errors.As(err, &te) || te.Code != c.code):
					t.Fatalf("error %v, want code %s", err, c.code)
				}
				if x.b.Nils != c.nils {
					t.Fatalf("%d nils, want %d", x.b.Nils, c.nils)
				}
			}
		})
	}
	// An unknown command, its "ERR " dropped as rueidis drops it, is ClassUndefined.
	x := newTestExchange(1)
	if _, done, err := x.ParseReply([]byte("-ERR unknown command 'X'\r\n")); !done || target.ClassOf(err) != target.ClassUndefined {
		t.Errorf("unknown command: done %v, %v", done, err)
	}
	// The password never shows in an error.
	x = newTestExchange(1)
	if _, _, err := x.ParseReply([]byte("-ERR bad hunter2 here\r\n")); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("password in the error: %v", err)
	}
	// Malformed replies end the exchange with a connection error.
	for _, in := range []string{"?x\r\n", "$abc\r\n", "$3\r\nabcde", "*-5\r\n", "\r\n"} {
		x := newTestExchange(1)
		_, done, err := x.ParseReply([]byte(in))
		if in == "$3\r\nabcde" {
			continue // not whole yet and not wrong yet
		}
		if !done || target.ClassOf(err) != target.ClassConnection {
			t.Errorf("%q: done %v, %v", in, done, err)
		}
	}
	x = newTestExchange(1)
	if _, done, err := x.ParseReply([]byte("$3\r\nabcd\r\n")); !done || target.ClassOf(err) != target.ClassConnection {
		t.Errorf("a bulk string longer than said: done %v, %v", done, err)
	}
}

// ParseReply never panics, never uses more than it was given, and ends a malformed
// reply with a classified error, whatever the bytes and however they are cut.
func FuzzParseReply(f *testing.F) {
	for _, seed := range []string{"+OK\r\n", "$3\r\nabc\r\n", "*2\r\n:1\r\n_\r\n", "%1\r\n+a\r\n-ERR x\r\n", ">1\r\n+p\r\n+OK\r\n", "|1\r\n+a\r\n+b\r\n:1\r\n", "$-1\r\n", "*-1\r\n",
		// a null blob error or verbatim string: no such thing in RESP3, once a panic
		"!-1\r\n", "=-1\r\n", "!0\r\n\r\n", "*1\r\n!-1\r\n"} {
		f.Add([]byte(seed), uint8(2), uint8(1))
		f.Add([]byte(seed), uint8(1), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, replies, piece uint8) {
		x := newTestExchange(max(int(replies%8), 1))
		targettest.FeedPieces(t, x, in, int(piece), "hunter2")
	})
}
