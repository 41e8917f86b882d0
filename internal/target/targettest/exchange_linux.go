package targettest

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// Exchange writes st's request for args on its socket fd and reads until the reply is
// whole, in pieces of a few bytes (replies arrive in pieces), as the runner's
// multiplexed path does, and returns the statement's error. Nothing may be left
// over after the reply.
func Exchange(t testing.TB, st target.Exchanger, fd int, args []target.Value) error {
	t.Helper()
	req, err := st.AppendRequest(nil, args)
	if err != nil {
		t.Fatal(err)
	}
	for len(req) > 0 {
		n, err := syscall.Write(fd, req)
		if err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EINTR) {
			t.Fatal(err)
		}
		req = req[max(n, 0):]
	}
	var in []byte
	buf := make([]byte, 7)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		n, err := syscall.Read(fd, buf)
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("read: %d, %v", n, err)
		}
		in = append(in, buf[:n]...)
		used, done, err := st.ParseReply(in)
		in = in[used:]
		if done {
			if len(in) != 0 {
				t.Errorf("%d bytes left after the reply", len(in))
			}
			return err
		}
	}
	t.Fatal("no whole reply within 30s")
	return nil
}
