package collect

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Sources of a snapshot shared by the server kinds: files the server reads or writes
// (configuration as read, log tails), the network, and the helpers they use. Files are
// read only when the server runs on this host; every file passes through RedactText.

// maxFileBytes bounds how much of one configuration file is copied into the bundle.
const maxFileBytes = 256 << 10

// columnQueryer is a connection that also returns the result set's column names
// (the MySQL target), for statements whose columns differ between versions.
type columnQueryer interface {
	QueryColumns(ctx context.Context, sql string) ([]string, [][]string, error)
}

// QueryColumns runs sql and returns its column names when the connection can say
// them (nil otherwise) and its rows.
func (s *Snap) QueryColumns(sql string) ([]string, [][]string, error) {
	if _, err := s.Query("SELECT 1"); err != nil {
		return nil, nil, err
	}
	if cq, ok := s.conn.(columnQueryer); ok {
		return cq.QueryColumns(s.ctx, sql)
	}
	rows, err := s.Query(sql)
	return nil, rows, err
}

// NamedRows renders one row per column: name and value. Without names (a connection
// that cannot say them) the fallback names are used, then positions.
func NamedRows(cols []string, row []string, fallback []string) [][]string {
	var out [][]string
	for i, v := range row {
		name := strconv.Itoa(i + 1)
		switch {
		case i < len(cols) && cols[i] != "":
			name = cols[i]
		case i < len(fallback):
			name = fallback[i]
		}
		out = append(out, []string{name, v})
	}
	return out
}

// LocalFile reads a file of the server's host (fathom's host when the server is
// local), at most maxFileBytes.
func (s *Snap) LocalFile(path string) ([]byte, error) {
	if !s.srv.Local {
		return nil, fmt.Errorf("the server is not on this host")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		b = append(b[:maxFileBytes], []byte(fmt.Sprintf("\n… (cut at %s)\n", SizeText(maxFileBytes)))...)
	}
	return b, nil
}

// tailLines returns the last n lines of a file, reading at most its last 1 MB.
func tailLines(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	const window = 1 << 20
	if st.Size() > window {
		if _, err := f.Seek(st.Size()-window, io.SeekStart); err != nil {
			return nil, err
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if st.Size() > window && len(lines) > 0 {
		lines = lines[1:] // a partial first line
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}

// StderrFile is where the server process's standard error goes when that is a
// regular file (pg_ctl -l, mysqld_safe, a service's redirection): its log.
func (s *Snap) StderrFile() string {
	if !s.srv.Local || s.srv.PID <= 0 {
		return ""
	}
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/2", s.srv.PID))
	if err != nil || !strings.HasPrefix(p, "/") {
		return ""
	}
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return p
}

// LogTail writes error_log_tail.txt: the last lines of the first readable of paths.
func (s *Snap) LogTail(what string, paths []string, lines int) error {
	var tried []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if !s.srv.Local {
			tried = append(tried, p+": the server is not on this host")
			continue
		}
		l, err := tailLines(p, lines)
		if err != nil {
			tried = append(tried, p+": "+OneLine(err))
			continue
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "last %d lines of %s:\n\n", len(l), p)
		b.WriteString(strings.Join(l, "\n") + "\n")
		s.Add("error_log_tail.txt", fmt.Sprintf("the last %d lines of the %s", lines, what), b.Bytes())
		problems := 0
		for _, line := range l {
			u := strings.ToUpper(line)
			if strings.Contains(u, "ERROR") || strings.Contains(u, "FATAL") || strings.Contains(u, "PANIC") || strings.Contains(u, "WARNING") {
				problems++
			}
		}
		s.Fact("Logs", "Error log", "%s: %d of the last %d lines are errors or warnings (error_log_tail.txt)", p, problems, len(l))
		return nil
	}
	if len(tried) == 0 {
		return fmt.Errorf("the %s's location is not known", what)
	}
	return fmt.Errorf("%s", strings.Join(tried, "; "))
}

// network writes network.txt: interfaces with their addresses, MTU and speed, and the
// sockets listening on this host (TCP, with the owning process when fathom may see it).
func (s *Snap) network() {
	s.Source("network", func() error {
		var b bytes.Buffer
		ifs, err := net.Interfaces()
		if err != nil {
			return err
		}
		var rows [][]string
		for _, i := range ifs {
			var addrs []string
			if as, err := i.Addrs(); err == nil {
				for _, a := range as {
					addrs = append(addrs, a.String())
				}
			}
			speed := readTrim("/sys/class/net/" + i.Name + "/speed")
			if n, err := strconv.Atoi(speed); err != nil || n <= 0 {
				speed = ""
			} else {
				speed += " Mb/s"
			}
			rows = append(rows, []string{i.Name, i.Flags.String(), strconv.Itoa(i.MTU), speed, strings.Join(addrs, " ")})
		}
		b.WriteString("interfaces:\n")
		b.Write(Aligned([]string{"name", "flags", "mtu", "speed", "addresses"}, rows))
		listen := listeningSockets()
		b.WriteString("\nlistening TCP sockets (/proc/net/tcp, tcp6):\n")
		b.Write(Aligned([]string{"address", "port", "process"}, listen))
		if v := readTrim("/proc/sys/net/core/somaxconn"); v != "" {
			fmt.Fprintf(&b, "\nnet.core.somaxconn %s, net.ipv4.tcp_max_syn_backlog %s, net.ipv4.ip_local_port_range %s\n",
				v, readTrim("/proc/sys/net/ipv4/tcp_max_syn_backlog"), strings.Join(strings.Fields(readTrim("/proc/sys/net/ipv4/ip_local_port_range")), "-"))
		}
		s.Add("network.txt", "network interfaces, listening sockets and socket settings of this host", b.Bytes())
		s.Fact("Host", "Network", "%d interfaces, %d listening TCP sockets (network.txt)", len(ifs), len(listen))
		return nil
	})
}

// listeningSockets reads /proc/net/tcp{,6} for sockets in the LISTEN state and names
// their processes from /proc/*/fd where readable.
func listeningSockets() [][]string {
	inodes := map[string][2]string{} // inode -> address, port
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Scan() // header
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			if len(fl) < 10 || fl[3] != "0A" {
				continue
			}
			addr, port := decodeProcAddr(fl[1])
			inodes[fl[9]] = [2]string{addr, port}
		}
		fh.Close()
	}
	owner := map[string]string{}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd")
	for _, d := range procs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		pid := filepath.Base(filepath.Dir(d))
		for _, e := range ents {
			l, err := os.Readlink(filepath.Join(d, e.Name()))
			if err != nil || !strings.HasPrefix(l, "socket:[") {
				continue
			}
			ino := strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")
			if _, ok := inodes[ino]; ok {
				owner[ino] = readTrim("/proc/"+pid+"/comm") + " (pid " + pid + ")"
			}
		}
	}
	var rows [][]string
	for ino, a := range inodes {
		rows = append(rows, []string{a[0], a[1], owner[ino]})
	}
	sort.Slice(rows, func(i, j int) bool {
		pi, _ := strconv.Atoi(rows[i][1])
		pj, _ := strconv.Atoi(rows[j][1])
		if pi != pj {
			return pi < pj
		}
		return rows[i][0] < rows[j][0]
	})
	return rows
}

// decodeProcAddr turns /proc/net/tcp's "0100007F:1538" into 127.0.0.1 and 5432.
func decodeProcAddr(s string) (string, string) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return s, ""
	}
	port, _ := strconv.ParseUint(p, 16, 16)
	raw := make([]byte, len(h)/2)
	for i := range raw {
		v, _ := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		raw[i] = byte(v)
	}
	// The kernel prints each 32-bit word in host (little-endian) order.
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	ip := net.IP(raw)
	return ip.String(), strconv.FormatUint(port, 10)
}

// FileContents renders files one after the other with a header each.
func (s *Snap) FileContents(files []string) ([]byte, []string) {
	var b bytes.Buffer
	var read []string
	for _, f := range files {
		data, err := s.LocalFile(f)
		if err != nil {
			fmt.Fprintf(&b, "##### %s: not read (%s)\n\n", f, OneLine(err))
			continue
		}
		read = append(read, f)
		fmt.Fprintf(&b, "##### %s (%s)\n%s", f, SizeText(int64(len(data))), data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.Bytes(), read
}
