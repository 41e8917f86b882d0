package instance

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
)

// Ports is where an instance's port may be: one port (Min == Max, `--port N`) or a
// range (`--port-range A-B`, e.g. the ports a firewall lets through). An instance
// without one takes any free port the system hands out.
type Ports struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// Fixed reports whether the instance must listen on exactly one port.
func (p *Ports) Fixed() bool { return p != nil && p.Min == p.Max }

func (p *Ports) String() string {
	if p.Fixed() {
		return strconv.Itoa(p.Min)
	}
	return fmt.Sprintf("%d-%d", p.Min, p.Max)
}

// The lowest port an instance may use: below it only root may listen, and the servers
// run as their own accounts.
const minPort = 1024

// The machine's default ports, which an instance never uses.
var reservedPorts = map[int]bool{5432: true, 3306: true, 6379: true}

// PortOf checks a port asked for by `--port` or a plan's instance port.
func PortOf(n int) (*Ports, error) {
	if n < minPort || n > 65535 {
		return nil, fmt.Errorf("port %d: an instance's port must be between %d and 65535", n, minPort)
	}
	if reservedPorts[n] {
		return nil, fmt.Errorf("port %d is a default database port, which a throwaway instance never takes (the host's own server may need it): choose another", n)
	}
	return &Ports{Min: n, Max: n}, nil
}

// ParsePorts reads a port range "A-B" (`--port-range`, a plan's port_range); a single
// port is a range of one.
func ParsePorts(s string) (*Ports, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		b = a
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("port range %q: write it as FIRST-LAST, e.g. 40000-40099", s)
	}
	if lo < minPort || hi > 65535 || lo > hi {
		return nil, fmt.Errorf("port range %q: want FIRST-LAST with %d <= FIRST <= LAST <= 65535", s, minPort)
	}
	if lo == hi {
		return PortOf(lo)
	}
	usable := 0
	for p := lo; p <= hi; p++ {
		if !reservedPorts[p] {
			usable++
		}
	}
	if usable == 0 {
		return nil, fmt.Errorf("port range %q holds only default database ports, which a throwaway instance never takes: choose another", s)
	}
	return &Ports{Min: lo, Max: hi}, nil
}

// errNoPort is a range with no free port.
var errNoPort = errors.New("no free port")

// freePort returns a TCP port that is free on 127.0.0.1 now and is not a default
// database port: any the system hands out, or one inside r. A fixed port that is in
// use is an error: it is never swapped for another.
func freePort(r *Ports) (int, error) {
	if r == nil {
		for tries := 0; tries < 20; tries++ {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return 0, fmt.Errorf("finding a free port: %v", err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			if !reservedPorts[port] {
				return port, nil
			}
		}
		return 0, errors.New("finding a free port: none found")
	}
	if r.Fixed() {
		if !PortFree(r.Min) {
			return 0, fmt.Errorf("port %d is in use: stop what listens there or choose another --port", r.Min)
		}
		return r.Min, nil
	}
	// From a random place in the range, so that instances started together do not
	// all try the same port first.
	n := r.Max - r.Min + 1
	start := rand.IntN(n)
	for k := 0; k < n; k++ {
		p := r.Min + (start+k)%n
		if !reservedPorts[p] && PortFree(p) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w in port range %s: every port there is in use; widen --port-range or stop what listens there", errNoPort, r)
}

// PortFree reports whether nothing listens on 127.0.0.1:port.
func PortFree(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// newPort moves a stopped instance to another free port (its port was taken), inside
// its range when it has one. An instance on a fixed port cannot move.
func (i *Instance) newPort() error {
	if i.Ports.Fixed() {
		return fmt.Errorf("instance %s: port %d is in use, and it was asked to listen there (--port): stop what listens there, or start it on another port", i.Name, i.Port)
	}
	p, err := freePort(i.Ports)
	if err != nil {
		return err
	}
	return i.setPort(p)
}

func (i *Instance) setPort(p int) error {
	i.Port = p
	i.Socket = i.Driver().SocketPath(i.Path, p)
	if err := i.WriteConfig(); err != nil {
		return err
	}
	return i.save()
}

// SetPorts moves a stopped instance into ports (nil: any free port), keeping its port
// when that is already inside; `fathom instance start --name NAME --port N`.
func (i *Instance) SetPorts(ports *Ports) error {
	if i.Running() {
		if ports != nil && (i.Port < ports.Min || i.Port > ports.Max) {
			return fmt.Errorf("instance %s is running on port %d: stop it (`fathom instance stop --keep %s`) to move it to %s", i.Name, i.Port, i.Name, ports)
		}
		i.Ports = ports
		return i.save()
	}
	i.Ports = ports
	if ports == nil || (i.Port >= ports.Min && i.Port <= ports.Max && !reservedPorts[i.Port]) {
		return i.save()
	}
	p, err := freePort(ports)
	if err != nil {
		return err
	}
	return i.setPort(p)
}
