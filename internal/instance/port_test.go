package instance_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	. "github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/instance/instancetest"
)

// hold listens on 127.0.0.1:port until the test ends (or close is called).
func hold(t *testing.T, port int) (close func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("holding port %d: %v", port, err)
	}
	t.Cleanup(func() { l.Close() })
	return func() { l.Close() }
}

// freeRun finds n consecutive ports free now (none a default database port).
func freeRun(t *testing.T, n int) int {
	t.Helper()
	for tries := 0; tries < 50; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		ok := p+n-1 <= 65535
		for q := p; ok && q < p+n; q++ {
			ok = PortFree(q) && q != 3306 && q != 5432 && q != 6379
		}
		if ok {
			return p
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}

func oneLineErr(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: error of several lines: %v", what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err, w)
		}
	}
}

// TestPortChecks: what --port, --port-range and a plan's port take, and what a
// setting may not say.
func TestPortChecks(t *testing.T) {
	for _, bad := range []int{0, 80, 1023, 65536, 3306, 5432, 6379} {
		if _, err := PortOf(bad); err == nil {
			t.Errorf("PortOf(%d) accepted", bad)
		}
	}
	if p, err := PortOf(40000); err != nil || !p.Fixed() || p.String() != "40000" {
		t.Errorf("PortOf(40000) = %v, %v", p, err)
	}
	for _, bad := range []string{"", "x", "5-3", "40000-", "100-2000", "40000-70000", "3306-3306", "3306", "40001-40000"} {
		if _, err := ParsePorts(bad); err == nil {
			t.Errorf("ParsePorts(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{"40000-40099": "40000-40099", " 41000 - 41001 ": "41000-41001", "42000": "42000", "3306-3307": "3306-3307"} {
		if p, err := ParsePorts(in); err != nil || p.String() != want {
			t.Errorf("ParsePorts(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	// A setting that would move the server away from where fathom looks is refused
	// before anything is made, naming the way to choose a port.
	base := instancetest.Dir(t)
	_, err := Create(context.Background(), Options{Kind: fakeKind, Name: "setport", Dir: base, Settings: []Setting{{Name: "port", Value: "5555"}}})
	oneLineErr(t, "setting port", err, "--port N", "--port-range A-B")
	if err := CheckSettings(fakeKind, []Setting{{Name: "Port", Value: "1"}}); err == nil {
		t.Error("CheckSettings accepted port")
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("a refused instance left %v", ents)
	}
}

// TestFixedPort: --port N is honoured fully, by the configuration, the client files
// and every start, or refused: a port in use fails the create or start in one line
// and the instance never moves elsewhere.
func TestFixedPort(t *testing.T) {
	ctx := context.Background()
	base := instancetest.Dir(t)
	port := freeRun(t, 1)
	ports, err := PortOf(port)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := Create(ctx, Options{Kind: fakeKind, Name: "fixed", Dir: base, Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	conf, _ := os.ReadFile(filepath.Join(inst.Path, "fake.conf"))
	if inst.Port != port || string(conf) != fmt.Sprintf("port %d\n", port) {
		t.Fatalf("port %d, config %q; want %d", inst.Port, conf, port)
	}
	if again, err := Open(inst.Path); err != nil || !again.Ports.Fixed() || again.Ports.Min != port {
		t.Fatalf("instance.json keeps %v (%v)", again.Ports, err)
	}
	release := hold(t, port)
	oneLineErr(t, "start on a taken fixed port", inst.Start(ctx), fmt.Sprintf("port %d is in use", port), "--port")
	if inst.Running() || inst.Port != port {
		t.Fatalf("after the refused start: running %v on port %d", inst.Running(), inst.Port)
	}
	release()
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Taken before the instance exists: nothing is made.
	hold(t, port)
	_, err = Create(ctx, Options{Kind: fakeKind, Name: "fixed2", Dir: base, Ports: ports})
	oneLineErr(t, "create on a taken fixed port", err, fmt.Sprintf("port %d is in use", port), "--port")
	if _, err := os.Stat(filepath.Join(base, "fixed2")); !os.IsNotExist(err) {
		t.Errorf("a refused instance left its directory: %v", err)
	}
}

// TestPortRange: --port-range keeps the instance inside the range, at creation, when
// its port is taken before a start, and when it is moved there later; a range with
// no free port is refused.
func TestPortRange(t *testing.T) {
	ctx := context.Background()
	base := instancetest.Dir(t)
	lo := freeRun(t, 4)
	hi := lo + 3
	ports, err := ParsePorts(fmt.Sprintf("%d-%d", lo, hi))
	if err != nil {
		t.Fatal(err)
	}
	in := func(p int) bool { return p >= lo && p <= hi }
	inst, err := Create(ctx, Options{Kind: fakeKind, Name: "ranged", Dir: base, Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if !in(inst.Port) {
		t.Fatalf("port %d outside %d-%d", inst.Port, lo, hi)
	}
	taken := inst.Port
	hold(t, taken)
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(filepath.Join(inst.Path, "fake.conf"))
	if !in(inst.Port) || inst.Port == taken || string(conf) != fmt.Sprintf("port %d\n", inst.Port) {
		t.Errorf("after its port was taken: port %d (config %q), want another in %d-%d", inst.Port, conf, lo, hi)
	}
	if err := inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Every port of a range taken: refused, nothing made.
	full := freeRun(t, 2)
	hold(t, full)
	hold(t, full+1)
	fr, _ := ParsePorts(fmt.Sprintf("%d-%d", full, full+1))
	_, err = Create(ctx, Options{Kind: fakeKind, Name: "full", Dir: base, Ports: fr})
	oneLineErr(t, "a range with no free port", err, "every port there is in use", "--port-range")
	// An instance made without a range is moved into one when stopped (instance start
	// --name NAME --port-range …), and keeps to it.
	other, err := Create(ctx, Options{Kind: fakeKind, Name: "moved", Dir: base})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Remove(context.Background()) })
	if err := other.SetPorts(ports); err != nil {
		t.Fatal(err)
	}
	if again, err := Open(other.Path); err != nil || !in(again.Port) || again.Ports == nil || again.Ports.String() != ports.String() {
		t.Errorf("moved into %s: %+v %v", ports, again, err)
	}
}
