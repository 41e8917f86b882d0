package mysql

import (
	"context"
	"errors"

	"github.com/fathom-lab/fathom/internal/target"
)

// RunDirect runs the statement as one COM_STMT_EXECUTE written straight from args
// (AppendRequest) and its reply read from the connection and walked (ParseReply),
// without the driver: no row objects, no conversions, no allocation. The rows are
// skipped, not counted or kept: for callers that never look at them (a sysbench
// script that reads no result set). ok is false when the statement cannot be run
// this way (not prepared on the server, an unknown reply format, TLS between the
// socket and the packets); the caller then uses Run. Cancellation is Run's.
func (s *stmt) RunDirect(ctx context.Context, args []target.Value) (ok bool, err error) {
	c := s.c
	if s.ds == nil || !s.x.ok || !c.t.direct() {
		return false, nil
	}
	if len(args) != s.nIn {
		return true, target.Errorf(target.ClassOther, "", "statement has %d placeholders but %d arguments were given", s.nIn, len(args))
	}
	if err := c.begin(ctx); err != nil {
		return true, err
	}
	return true, c.end(ctx, s.exchangeDirect(args))
}

// direct reports whether the connections' sockets carry the packets as they are (no
// TLS), so that a statement can be exchanged on them directly.
func (t *Target) direct() bool {
	return !t.cfg.Unprepared && (t.mc.TLSConfig == "" || t.mc.TLSConfig == "false")
}

func (s *stmt) exchangeDirect(args []target.Value) error {
	c := s.c
	req, err := s.AppendRequest(c.xbuf[:0], args)
	c.xbuf = req[:0]
	if err != nil {
		return err
	}
	for done := 0; done < len(req); {
		n, werr := c.nc.Write(req[done:])
		if werr != nil {
			return s.Lost(werr)
		}
		done += n
	}
	if cap(c.rbuf) < 16*1024 {
		c.rbuf = make([]byte, 16*1024)
	}
	buf := c.rbuf[:cap(c.rbuf)]
	have := 0
	for {
		n, rerr := c.nc.Read(buf[have:])
		if rerr != nil {
			return s.Lost(rerr)
		}
		have += n
		used, fin, perr := s.ParseReply(buf[:have])
		if fin {
			if used != have && perr == nil {
				// Bytes beyond the reply: the connection is out of step.
				return s.Lost(errors.New("unexpected bytes after the reply from the server"))
			}
			return perr
		}
		have = copy(buf, buf[used:have])
		if have == len(buf) {
			// A packet longer than the buffer: grow it to hold the packet.
			nb := make([]byte, 2*len(buf))
			copy(nb, buf)
			c.rbuf, buf = nb, nb
		}
	}
}
