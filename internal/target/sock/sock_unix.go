//go:build linux

package sock

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
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
// and the descriptor itself is closed only once no read or write is using it.
//
// Short waits bypass the Go scheduler too. A blocking system call made the usual way
// (syscall.Read) tells the runtime the thread is blocked: its P is handed off and, as
// soon as every P looks idle, sysmon goes to sleep and is woken again by the next
// system call — on a 2-core machine that alone cost about a fifth of the client's CPU,
// and clients migrated between threads at every wake-up. So while each open
// connection can have a P of its own (see Conns; the runner raises GOMAXPROCS for
// that), a read is one raw blocking receive that holds its P like a C client's thread,
// bounded by a receive timeout of rawWait on the socket, and writes are raw
// non-blocking sends; a longer wait, a full send buffer or too few Ps fall back to
// runtime-aware calls. A garbage collection's preemption signal interrupts the raw
// receive (see doRead), so it does not wait for the reply.
//
// Measured on sysbench's oltp_point_select with 4 clients (bench/vs-anchors.sh's
// server, same run): the runtime-aware reads gave 8–17k tps at 30–44 µs of client CPU
// per transaction; a non-blocking receive, a ppoll bounded by a 1 ms timer and a
// second receive gave 34–36k tps at 26–27 µs; the single bounded receive gives
// 43–44k tps at 18–19 µs, where sysbench gave 44–49k at 17–18 µs. The ppoll's timer
// was the expense: arming and cancelling one per reply, in a virtual machine.
//
// The descriptor is used directly, not through os.File, whose lock, deferred unlock and
// callback cost about half a microsecond per statement. state counts the calls using
// the descriptor and carries a closed flag; the descriptor is closed when both Close has
// been called and the last call has returned, so a call never uses a descriptor number
// that was closed and given to another file.
type blockingConn struct {
	fd     uintptr
	state  atomic.Int64 // calls in progress, plus closedFlag once Close was called
	local  net.Addr
	remote net.Addr
	reads  uint64
	yield  time.Duration // when the reading goroutine last yielded, since epoch
}

const closedFlag = 1 << 62

// acquire registers a call using the descriptor; it fails once Close was called.
func (c *blockingConn) acquire() bool {
	for {
		s := c.state.Load()
		if s&closedFlag != 0 {
			return false
		}
		if c.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// release ends a call, closing the descriptor if Close was called and it was the last.
func (c *blockingConn) release() {
	if c.state.Add(-1) == closedFlag {
		_ = syscall.Close(int(c.fd))
	}
}

// rawWait bounds a wait in a raw system call (see blockingConn); a variable so that
// tests can change it. Signals interrupt the wait, so it need not be short for the
// runtime's sake; a reply that takes longer is waited for through the runtime, which
// costs a ppoll, a hand-off of the P and a busier sysmon. At 1ms, 64 clients on
// sysbench's point select (replies queueing for 1–2ms on 2 cores) took that path for
// one reply in twelve: 32.2 µs of client CPU per transaction (median of 3 alternating
// rounds) against 25.8 µs at 20ms, and a tenth less throughput.
var rawWait = 20 * time.Millisecond

// open counts the connections open in blocking mode; procs is GOMAXPROCS, read again
// when a connection opens and every procsEvery reads of a connection
// (runtime.GOMAXPROCS takes a global lock: not for every read).
var open, procs atomic.Int64

const procsEvery = 256

// A goroutine waiting in raw receives never passes through the scheduler, so after
// 10ms the runtime preempts it with a signal, which interrupts the receive (EINTR, then
// the yield in doRead). Yielding of its own accord every yieldEvery, before that
// happens, costs less. Each yield has a price too (it wakes an idle thread to look for
// work), so the interval is as long as it can be. Measured with bench/vs-anchors.sh's
// servers, builds alternating, medians of 3–5 rounds of client CPU per transaction:
// with 4 clients, pgbench-style selects 24.2 µs without yielding, 20.1 µs every 5ms;
// point selects 17.5 µs without, 15.5 µs every 8ms; every 2ms cost 22.5 µs. With 16
// clients on point selects, 31.0 µs without, 22.8 µs every 5ms, 21.5 µs every 7ms,
// 20.3 µs every 9ms.
const yieldEvery = 9 * time.Millisecond

var epoch = time.Now()

// interrupted counts raw receives interrupted by a signal, for tests.
var interrupted atomic.Int64

// Conns reports how many connections are open in blocking mode.
func Conns() int { return int(open.Load()) }

// rawOK reports whether a raw wait may hold a P: every open connection has one of
// its own and one is left for everything else.
func rawOK() bool { return open.Load() < procs.Load() }

type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const pollIn = 0x1

// doRead reads into b. While rawOK, it is one raw blocking receive, which the
// socket's receive timeout (rawWait, set by Blocking) bounds: the thread sleeps in the
// kernel holding its P, as a C client's thread would, and the common case costs one
// system call and no timer of its own. A signal interrupts that receive (a timeout on
// the socket makes the kernel return EINTR instead of restarting it), and the
// goroutine then yields, so that a garbage collection stopping the world, whose
// preemption signal that was, need not wait for the reply. A reply slower than rawWait,
// or too few Ps, means a runtime-aware wait in ppoll without a timeout, then a
// non-blocking receive.
func (c *blockingConn) doRead(b []byte) (int, error) {
	if c.reads++; c.reads%procsEvery == 0 {
		procs.Store(int64(runtime.GOMAXPROCS(0)))
	}
	fd := c.fd
	flags := uintptr(0)
	if !rawOK() {
		flags = syscall.MSG_DONTWAIT
	} else if now := time.Since(epoch); now-c.yield >= yieldEvery {
		c.yield = now
		runtime.Gosched()
	}
	for {
		n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), flags, 0, 0)
		switch {
		case e == 0:
			if n == 0 {
				return 0, io.EOF
			}
			return int(n), nil
		case e == syscall.EINTR:
			interrupted.Add(1)
			runtime.Gosched()
			c.yield = time.Since(epoch) // that was a yield too
			continue
		case e != syscall.EAGAIN:
			return 0, e
		}
		// Nothing within rawWait (or at once, without a P to hold): wait for the
		// socket to become readable, telling the runtime this thread is blocked.
		flags = syscall.MSG_DONTWAIT
		pfd := pollFd{fd: int32(fd), events: pollIn}
		for {
			_, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, 0, 0, 0, 0)
			if e != syscall.EINTR {
				break
			}
		}
	}
}

// doWrite sends b: raw non-blocking sends, and the runtime-aware blocking write for
// whatever does not fit in the send buffer.
func (c *blockingConn) doWrite(b []byte) (int, error) {
	fd := c.fd
	done := 0
	for done < len(b) {
		if rawOK() {
			n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[done])), uintptr(len(b)-done), syscall.MSG_DONTWAIT|syscall.MSG_NOSIGNAL, 0, 0)
			if e == 0 {
				done += int(n)
				continue
			}
			if e == syscall.EINTR {
				continue
			}
			if e != syscall.EAGAIN {
				return done, e
			}
		}
		n, err := syscall.Write(int(fd), b[done:])
		if n > 0 {
			done += n
		}
		if err != nil && err != syscall.EINTR && err != syscall.EAGAIN {
			return done, err
		}
	}
	return done, nil
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
	tv := syscall.NsecToTimeval(int64(rawWait))
	if err := syscall.SetsockoptTimeval(dup, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		_ = syscall.Close(dup)
		return nc
	}
	bc := &blockingConn{fd: uintptr(dup), local: nc.LocalAddr(), remote: nc.RemoteAddr()}
	open.Add(1)
	procs.Store(int64(runtime.GOMAXPROCS(0)))
	_ = nc.Close()
	return bc
}

func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if !c.acquire() {
		return 0, wrap("read", net.ErrClosed)
	}
	n, err := c.doRead(b)
	c.release()
	return n, wrap("read", err)
}

func (c *blockingConn) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if !c.acquire() {
		return 0, wrap("write", net.ErrClosed)
	}
	n, err := c.doWrite(b)
	c.release()
	return n, wrap("write", err)
}

// wrap makes a system call error look like os.File's (an *os.PathError around the
// errno), so that callers testing for syscall errors with errors.Is still can.
func wrap(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return &os.PathError{Op: op, Path: "socket", Err: err}
}

// Close shuts the socket down, which wakes a call blocked on it, and closes the
// descriptor once no call uses it.
func (c *blockingConn) Close() error {
	for {
		s := c.state.Load()
		if s&closedFlag != 0 {
			return nil
		}
		// Holding a reference keeps the descriptor open for the shutdown.
		if c.state.CompareAndSwap(s, (s+1)|closedFlag) {
			break
		}
	}
	open.Add(-1)
	_ = syscall.Shutdown(int(c.fd), syscall.SHUT_RDWR)
	c.release()
	return nil
}

// FD returns the descriptor of a connection that Blocking made, for a caller that
// reads and writes it directly (non-blocking, with MSG_DONTWAIT) and waits for it
// with epoll; it stays open until the connection is closed.
func FD(nc net.Conn) (int, bool) {
	c, ok := nc.(*blockingConn)
	if !ok || c.state.Load()&closedFlag != 0 {
		return -1, false
	}
	return int(c.fd), true
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

// Deadlines are not supported: fathom's targets cancel a call by closing the connection.
func (c *blockingConn) SetDeadline(time.Time) error      { return nil }
func (c *blockingConn) SetReadDeadline(time.Time) error  { return nil }
func (c *blockingConn) SetWriteDeadline(time.Time) error { return nil }
