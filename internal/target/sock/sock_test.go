//go:build linux

package sock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// pair returns a blocking client connection and the server's end of it.
func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			acc <- c
		}
		close(acc)
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := Blocking(nc)
	if _, ok := c.(*blockingConn); !ok {
		t.Fatalf("Blocking returned %T", c)
	}
	srv := <-acc
	t.Cleanup(func() { c.Close(); srv.Close() })
	return c, srv
}

func TestPingPong(t *testing.T) {
	c, srv := pair(t)
	if Conns() < 1 {
		t.Errorf("Conns() = %d with one open", Conns())
	}
	go io.Copy(srv, srv) // echo
	buf := make([]byte, 64)
	for i := 0; i < 1000; i++ {
		msg := []byte{byte(i), byte(i >> 8), 'x'}
		if n, err := c.Write(msg); n != 3 || err != nil {
			t.Fatalf("write: %d %v", n, err)
		}
		got := 0
		for got < 3 {
			n, err := c.Read(buf[got:])
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			got += n
		}
		if !bytes.Equal(buf[:3], msg) {
			t.Fatalf("echo %v, want %v", buf[:3], msg)
		}
	}
}

// A reply slower than the raw wait arrives through the runtime-aware blocking read.
func TestSlowReply(t *testing.T) {
	saved := rawWait
	rawWait = 5 * time.Millisecond
	defer func() { rawWait = saved }()
	c, srv := pair(t)
	go func() {
		time.Sleep(50 * time.Millisecond)
		srv.Write([]byte("late"))
	}()
	buf := make([]byte, 8)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "late" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
}

// A write larger than the socket buffers completes while the peer reads slowly.
func TestLargeWrite(t *testing.T) {
	c, srv := pair(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	done := make(chan []byte)
	go func() {
		var got bytes.Buffer
		buf := make([]byte, 4096)
		for got.Len() < len(big) {
			n, err := srv.Read(buf)
			if err != nil {
				break
			}
			got.Write(buf[:n])
		}
		done <- got.Bytes()
	}()
	if n, err := c.Write(big); n != len(big) || err != nil {
		t.Fatalf("write: %d of %d, %v", n, len(big), err)
	}
	if got := <-done; !bytes.Equal(got, big) {
		t.Fatalf("peer got %d bytes, want %d", len(got), len(big))
	}
}

// Close wakes a read that is waiting, in either kind of wait.
func TestCloseWakesRead(t *testing.T) {
	for _, wait := range []time.Duration{0, 20 * time.Millisecond} {
		c, _ := pair(t)
		errc := make(chan error, 1)
		go func() {
			buf := make([]byte, 8)
			_, err := c.Read(buf)
			errc <- err
		}()
		time.Sleep(wait)
		c.Close()
		select {
		case err := <-errc:
			if err == nil {
				t.Error("read after close returned no error")
			}
		case <-time.After(30 * time.Second): // a read Close does not wake waits for ever
			t.Fatal("close did not wake the read")
		}
	}
}

// EOF from the peer is io.EOF.
func TestPeerClose(t *testing.T) {
	c, srv := pair(t)
	srv.Close()
	buf := make([]byte, 8)
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("read after peer close: %v, want EOF", err)
	}
}

// A garbage collection does not wait for a reply that a raw receive is waiting for:
// its preemption signal interrupts the receive, which yields.
func TestGCDuringRawWait(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(Conns() + 3)) // a P for the raw wait, as the runner does
	saved := rawWait
	rawWait = 10 * time.Second
	defer func() { rawWait = saved }()
	c, srv := pair(t)
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 8)
		n, err := c.Read(buf)
		if err == nil && string(buf[:n]) != "late" {
			err = fmt.Errorf("read %q", buf[:n])
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // the reader is now in its raw receive
	if !rawOK() {
		t.Fatalf("no raw wait: %d connections, GOMAXPROCS %d", Conns(), runtime.GOMAXPROCS(0))
	}
	// If the collection waited for the reply, it would wait for ever: nothing in this
	// process runs while the world is stopped. A child process sends the reply after
	// 20s in that case; otherwise the test sends it and stops the child. A collection
	// that did not wait takes milliseconds, and well under 10s on a loaded machine.
	f, err := srv.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	child := exec.Command("sh", "-c", "sleep 20; printf late >&3")
	child.ExtraFiles = []*os.File{f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	start := time.Now()
	runtime.GC()
	d := time.Since(start)
	if child.Process.Kill() == nil {
		srv.Write([]byte("late"))
	}
	if d > 10*time.Second {
		t.Errorf("runtime.GC took %v while a raw receive waited", d)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Closing while a read waits, many times over, leaves no descriptor open, and calls
// after Close fail with net.ErrClosed.
func TestCloseReleasesDescriptor(t *testing.T) {
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd to count descriptors")
		}
		return len(ents)
	}
	before := fds()
	for i := 0; i < 50; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		srv, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		c := Blocking(nc)
		errc := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 8))
			errc <- err
		}()
		if i%2 == 0 {
			time.Sleep(time.Millisecond)
		}
		c.Close()
		c.Close() // a second Close is harmless
		if err := <-errc; err == nil {
			t.Fatal("read during close returned no error")
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("write after close: %v, want net.ErrClosed", err)
		}
		srv.Close()
	}
	if after := fds(); after > before {
		t.Errorf("%d descriptors open before, %d after 50 connections closed", before, after)
	}
}

// A client in a ping-pong yields before the runtime would preempt it with a signal, so
// its raw receives are not interrupted.
func TestYieldsBeforePreemption(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(Conns() + 3))
	c, srv := pair(t)
	go func() { // echo after 200µs of work, so that the client mostly waits in a receive
		buf := make([]byte, 4)
		for {
			if _, err := io.ReadFull(srv, buf); err != nil {
				return
			}
			for start := time.Now(); time.Since(start) < 200*time.Microsecond; {
			}
			if _, err := srv.Write(buf); err != nil {
				return
			}
		}
	}()
	// Sysmon preempts a goroutine that has not passed through the scheduler for 10ms,
	// and the client yields every 9ms before a receive: so a receive is interrupted only
	// after it has waited more than 1ms, and again only every 10ms more. On a loaded
	// machine replies are that slow now and then, and those interruptions are expected;
	// an interruption of a round trip shorter than that is what yielding prevents
	// (without yielding, 13–17 in 500ms on an idle machine). Garbage collections also
	// interrupt (a few signals each).
	gcs := func() uint64 {
		m := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(m)
		return m[0].Value.Uint64()
	}
	gc0, before := gcs(), interrupted.Load()
	msg, buf := []byte("ping"), make([]byte, 4)
	n, slow, unexplained := 0, 0, int64(0)
	for start := time.Now(); time.Since(start) < 500*time.Millisecond; n++ {
		i0, t0 := interrupted.Load(), time.Now()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		d, allowed := time.Since(t0), int64(0)
		if d > time.Millisecond {
			slow++
			allowed = 1 + int64(d/(10*time.Millisecond))
		}
		unexplained += max(0, interrupted.Load()-i0-allowed)
	}
	got, gc := interrupted.Load()-before, gcs()-gc0
	t.Logf("%d receives interrupted in 500ms, %d not explained by a slow reply; %d round trips, %d over 1ms; %d GCs", got, unexplained, n, slow, gc)
	if unexplained > 3+4*int64(gc) {
		t.Errorf("%d raw receives interrupted by signals in 500ms (%d round trips, %d of them over 1ms; %d GCs); %d of the interruptions in round trips too short for sysmon to preempt a client that yields",
			got, n, slow, gc, unexplained)
	}
}
