//go:build unix

package sock

import (
	"net"
	"os"
	"syscall"
	"time"
)

// blockingConn is a connected socket in blocking mode, read and written with plain
// system calls instead of Go's network poller.
//
// Why: a statement is a strict request/response ping-pong. Through the poller each one
// costs a read that fails with EAGAIN, parking the goroutine, epoll_wait and a wake-up;
// a blocking read costs one system call, as in libmysqlclient and libpq. On sysbench's
// oltp_point_select this cuts client CPU per statement by about a quarter and raises
// throughput (see the targets' BenchmarkPointSelect). The price is one OS thread per connection
// blocked in the kernel while waiting, which is what C benchmark clients do anyway.
//
// Cancellation still works: Close shuts the socket down, which wakes a blocked read,
// and os.File defers the close of the descriptor until that read has returned.
type blockingConn struct {
	f      *os.File
	raw    syscall.RawConn
	local  net.Addr
	remote net.Addr
}

// Blocking turns a dialed connection into a blocking one, or returns it unchanged if
// that is not possible. The returned connection ignores deadlines: callers cancel by
// closing it.
func Blocking(nc net.Conn) net.Conn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nc
	}
	dup, derr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) { dup, derr = syscall.Dup(int(fd)) }); err != nil || derr != nil {
		return nc
	}
	// O_NONBLOCK belongs to the open file description, shared by both descriptors, so
	// the poller's descriptor is closed right after.
	if err := syscall.SetNonblock(dup, false); err != nil {
		_ = syscall.Close(dup)
		return nc
	}
	f := os.NewFile(uintptr(dup), "sock "+nc.RemoteAddr().String())
	fraw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nc
	}
	bc := &blockingConn{f: f, raw: fraw, local: nc.LocalAddr(), remote: nc.RemoteAddr()}
	_ = nc.Close()
	return bc
}

func (c *blockingConn) Read(b []byte) (int, error)  { return c.f.Read(b) }
func (c *blockingConn) Write(b []byte) (int, error) { return c.f.Write(b) }

func (c *blockingConn) Close() error {
	_ = c.raw.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
	return c.f.Close()
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

// Deadlines are not supported: fathom's targets cancel a call by closing the connection.
func (c *blockingConn) SetDeadline(time.Time) error      { return nil }
func (c *blockingConn) SetReadDeadline(time.Time) error  { return nil }
func (c *blockingConn) SetWriteDeadline(time.Time) error { return nil }
