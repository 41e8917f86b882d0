package sblua_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/sblua"
)

// wire is a TCP proxy in front of the MySQL/MariaDB test server that reads the
// client's side of the protocol and counts the statements it sends, by template:
// COM_QUERY's text, and COM_STMT_EXECUTE as the text of the statement prepared
// (COM_STMT_PREPARE) under its id on that connection. This is what the server
// received, whichever client sent it (real sysbench or fathom), without changing
// any server setting.
type wire struct {
	ln     net.Listener
	server string
	pg     bool // PostgreSQL's protocol, else MySQL's
	mu     sync.Mutex
	counts map[string]int
	wg     sync.WaitGroup
}

func newWire(t *testing.T, server string, pg bool) *wire {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wire{ln: ln, server: server, pg: pg, counts: map[string]int{}}
	go w.accept()
	t.Cleanup(func() { ln.Close(); w.wg.Wait() })
	return w
}

func (w *wire) port() int { return w.ln.Addr().(*net.TCPAddr).Port }

func (w *wire) accept() {
	for {
		c, err := w.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", w.server)
		if err != nil {
			c.Close()
			continue
		}
		if w.pg {
			w.wg.Add(2)
			go func() { defer w.wg.Done(); io.Copy(c, s); c.Close() }()
			go func() { defer w.wg.Done(); w.pgClient(c, s); s.Close() }()
			continue
		}
		st := &wireConn{stmts: map[uint32]string{}}
		w.wg.Add(2)
		go func() { defer w.wg.Done(); w.fromServer(st, s, c); c.Close() }()
		go func() { defer w.wg.Done(); w.client(st, c, s); s.Close() }()
	}
}

// wireConn maps one connection's statement ids (from the server's
// COM_STMT_PREPARE_OK) to their text.
type wireConn struct {
	mu      sync.Mutex
	pending []string
	stmts   map[uint32]string
}

func readPacket(r io.Reader) (hdr, body []byte, err error) {
	hdr = make([]byte, 4)
	if _, err = io.ReadFull(r, hdr); err != nil {
		return
	}
	body = make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	_, err = io.ReadFull(r, body)
	return
}

// fromServer copies the server's packets to the client, taking the ids of prepared
// statements from the first reply to each COM_STMT_PREPARE.
func (w *wire) fromServer(st *wireConn, s, c net.Conn) {
	for {
		hdr, body, err := readPacket(s)
		if err != nil {
			return
		}
		if _, err := c.Write(append(hdr, body...)); err != nil {
			return
		}
		if hdr[3] != 1 || len(body) == 0 {
			continue
		}
		st.mu.Lock()
		if len(st.pending) > 0 && (body[0] == 0x00 && len(body) == 12 || body[0] == 0xff) {
			if body[0] == 0x00 {
				st.stmts[binary.LittleEndian.Uint32(body[1:5])] = st.pending[0]
			}
			st.pending = st.pending[1:]
		}
		st.mu.Unlock()
	}
}

// client copies the client's packets to the server, noting each command.
func (w *wire) client(st *wireConn, c, s net.Conn) {
	for {
		hdr, body, err := readPacket(c)
		if err != nil {
			return
		}
		if hdr[3] == 0 && len(body) > 0 {
			switch body[0] {
			case 0x03: // COM_QUERY
				w.note(string(body[1:]))
			case 0x16: // COM_STMT_PREPARE (noted before it is sent: the reply follows)
				st.mu.Lock()
				st.pending = append(st.pending, string(body[1:]))
				st.mu.Unlock()
			case 0x17: // COM_STMT_EXECUTE
				st.mu.Lock()
				q, ok := st.stmts[binary.LittleEndian.Uint32(body[1:5])]
				st.mu.Unlock()
				if !ok {
					q = "<execute of an unknown statement> sbtest"
				}
				w.note(q)
			}
		}
		if _, err := s.Write(append(hdr, body...)); err != nil {
			return
		}
	}
}

// pgClient copies a PostgreSQL client's messages to the server, noting each simple
// query ('Q') and each Bind ('B') as the text of the statement it binds (from
// Parse, 'P', on that connection). An SSL or GSS encryption request is answered
// "no" here, so that the rest can be read.
func (w *wire) pgClient(c, s net.Conn) {
	stmts := map[string]string{}
	started := false
	for !started {
		var n uint32
		if err := binary.Read(c, binary.BigEndian, &n); err != nil || n < 8 {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(body); code == 80877103 || code == 80877104 {
			c.Write([]byte{'N'})
			continue
		}
		hdr := binary.BigEndian.AppendUint32(nil, n)
		if _, err := s.Write(append(hdr, body...)); err != nil {
			return
		}
		started = true
	}
	cstr := func(b []byte) (string, []byte) {
		i := strings.IndexByte(string(b), 0)
		if i < 0 {
			return string(b), nil
		}
		return string(b[:i]), b[i+1:]
	}
	for {
		head := make([]byte, 5)
		if _, err := io.ReadFull(c, head); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		switch head[0] {
		case 'Q':
			q, _ := cstr(body)
			w.note(q)
		case 'P':
			name, rest := cstr(body)
			q, _ := cstr(rest)
			stmts[name] = q
		case 'B':
			_, rest := cstr(body)
			name, _ := cstr(rest)
			w.note(stmts[name])
		}
		if _, err := s.Write(append(head, body...)); err != nil {
			return
		}
	}
}

var (
	strLit  = regexp.MustCompile(`'(?:[^'\\]|\\.)*'`)
	numLit  = regexp.MustCompile(`\$?\b\d+(\.\d+)?\b`)
	tupleLs = regexp.MustCompile(`\(\?(, ?\?)*\)(,\s*\(\?(, ?\?)*\))+`)
	spaces  = regexp.MustCompile(`\s+`)
)

// template is a statement with its literals as '?', runs of VALUES tuples as one
// and the table's number as '?'.
func template(q string) string {
	q = strLit.ReplaceAllString(q, "?")
	q = numLit.ReplaceAllString(q, "?")
	q = strings.ReplaceAll(q, "sbtest?", "sbtest#")
	q = regexp.MustCompile(`sbtest\d+`).ReplaceAllString(q, "sbtest#")
	q = spaces.ReplaceAllString(strings.TrimSpace(q), " ")
	q = tupleLs.ReplaceAllStringFunc(q, func(s string) string { return s[:strings.Index(s, ")")+1] + ",…" })
	return q
}

func (w *wire) note(q string) {
	t := template(q)
	if !strings.Contains(t, "sbtest") && t != "BEGIN" && t != "COMMIT" {
		return // session setup (SET NAMES, SELECT @@…): each client's own
	}
	w.mu.Lock()
	w.counts[t]++
	w.mu.Unlock()
}

func (w *wire) take() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.counts
	w.counts = map[string]int{}
	return out
}

func diffCounts(a, b map[string]int) string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var d strings.Builder
	for _, k := range ks {
		if a[k] != b[k] {
			fmt.Fprintf(&d, "  sysbench %d, fathom %d: %.100s\n", a[k], b[k], k)
		}
	}
	return d.String()
}

// schema is each sbtest table's definition and row count: SHOW CREATE TABLE
// without its AUTO_INCREMENT counter on MySQL; the columns and indexes from the
// catalog on PostgreSQL.
func schema(t *testing.T, ctx context.Context, conn target.Conn, pg bool, names []string) string {
	var b strings.Builder
	for _, name := range names {
		if pg {
			cols, err := conn.Query(ctx, "SELECT column_name, data_type, COALESCE(character_maximum_length, 0), COALESCE(column_default, ''), is_nullable FROM information_schema.columns WHERE table_name = ? AND table_schema = current_schema() ORDER BY ordinal_position", target.Text([]byte(name)))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			idx, err := conn.Query(ctx, "SELECT indexdef FROM pg_indexes WHERE tablename = ? AND schemaname = current_schema() ORDER BY indexname", target.Text([]byte(name)))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			fmt.Fprintf(&b, "%s\ncolumns: %v\nindexes: %v\n", name, cols, idx)
		} else {
			rows, err := conn.Query(ctx, "SHOW CREATE TABLE "+name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			fmt.Fprintf(&b, "%s\n", regexp.MustCompile(` AUTO_INCREMENT=\d+`).ReplaceAllString(rows[0][1], ""))
		}
		fmt.Fprintf(&b, "rows: %d\n", count(t, ctx, conn, name))
	}
	return b.String()
}

// diffCases are the scripts sysbench ships with options of theirs, as both tools
// take them.
var diffCases = []struct {
	script string
	opts   []string
	pg     bool     // also on PostgreSQL
	tables []string // the tables prepare makes (default sbtest1 … --tables)
	// stepped: also run with two clients on MySQL, stepped on the runner's
	// multiplexed path (a script written for two threads that reads no results).
	stepped bool
}{
	{"oltp_read_write", []string{"--tables=2", "--table-size=200"}, true, nil, true},
	{"oltp_read_only", []string{"--tables=1", "--table-size=300", "--range-selects=off"}, true, nil, true},
	{"oltp_write_only", []string{"--tables=2", "--table-size=100", "--delete-inserts=3"}, true, nil, true},
	{"oltp_point_select", []string{"--tables=1", "--table-size=150", "--auto-inc=off"}, true, nil, true},
	{"oltp_update_index", []string{"--tables=1", "--table-size=100", "--create-secondary=off"}, true, nil, true},
	{"oltp_update_non_index", []string{"--tables=1", "--table-size=100"}, true, nil, true},
	{"oltp_insert", []string{"--tables=1", "--table-size=100"}, true, nil, true},
	{"oltp_delete", []string{"--tables=1", "--table-size=100"}, true, nil, true},
	{"select_random_points", []string{"--tables=1", "--table-size=100", "--random-points=5"}, true, nil, true},
	{"select_random_ranges", []string{"--tables=1", "--table-size=100", "--number-of-ranges=3"}, true, nil, true},
	{"oltp_read_write", []string{"--tables=1", "--table-size=100", "--skip-trx=on", "--point-selects=2"}, true, nil, true},
	// Scripts of our own (testdata/diff): queries and their results, query_row, a
	// module of theirs, bulk inserts in events, parameters, an error caught.
	{"testdata/diff/custom_query", []string{"--rows=40", "--span=4", "--updates=3"}, true, []string{"sbtest_kv"}, false},
	{"testdata/diff/custom_bulk", []string{"--batch=3"}, true, []string{"sbtest_bulk"}, false},
	// Options of every type, init/done, two connections a thread, parameters of
	// several SQL types, nfields and query_row, special, pareto and gaussian draws.
	{"testdata/diff/custom_types", []string{"--rows=40", "--steps=2,3", "--tag=x", "--skip-scan=off"}, true, []string{"sbtest_types"}, false},
	// sysbench 0.5's API: options as globals, db_* functions, bound variables.
	{"testdata/diff/custom_legacy", []string{"--legacy-rows=30", "--legacy-points=3"}, true, []string{"sbtest_legacy"}, true},
}

// TestDifferentialSysbench runs scripts through real sysbench 1.0 and through
// fathom on the same database and options, on MariaDB and PostgreSQL, and compares
// what the server received (statement templates and their counts, prepare and run)
// and the tables prepare made. One client and a fixed event count make the counts
// exact: the scripts' structure, not chance, decides them.
func TestDifferentialSysbench(t *testing.T) {
	bin, err := exec.LookPath("sysbench")
	if err != nil {
		if dbtest.Required() {
			t.Fatal("sysbench is not installed (apt-get install sysbench)")
		}
		t.Skip("sysbench is not installed")
	}
	t.Run("mysql", func(t *testing.T) { differential(t, bin, false) })
	t.Run("postgres", func(t *testing.T) { differential(t, bin, true) })
}

func differential(t *testing.T, bin string, pg bool) {
	var dsn string
	if pg {
		dsn = dbtest.PostgresDatabase(t, "sblua_diff")
	} else {
		dsn = dbtest.MySQLDatabase(t, "sblua_diff")
	}
	u, _ := url.Parse(dsn)
	host := u.Host
	if !strings.Contains(host, ":") {
		host += map[bool]string{true: ":5432", false: ":3306"}[pg]
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	w := newWire(t, host, pg)
	pu := *u
	pu.Host = "127.0.0.1:" + strconv.Itoa(w.port())
	tgt := open(t, pu.String())
	direct := open(t, dsn)
	ctx := context.Background()
	conn, err := direct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn2 := []string{"--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=" + strconv.Itoa(w.port()),
		"--mysql-user=" + u.User.Username(), "--mysql-db=" + dbName}
	if pg {
		conn2 = []string{"--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=" + strconv.Itoa(w.port()),
			"--pgsql-user=" + u.User.Username(), "--pgsql-db=" + dbName}
	}

	const events = 60
	for _, c := range diffCases {
		if pg && !c.pg {
			continue
		}
		name := c.script + " " + strings.Join(c.opts, " ")
		t.Run(name, func(t *testing.T) {
			path := sblua.SearchDirs[0] + "/" + c.script + ".lua"
			if strings.HasPrefix(c.script, "testdata/") {
				path = c.script + ".lua"
			}
			tables := 1
			params := workload.Params{}
			for _, o := range c.opts {
				k, v, _ := strings.Cut(strings.TrimPrefix(o, "--"), "=")
				params[k] = v
				if k == "tables" {
					tables, _ = strconv.Atoi(v)
				}
			}
			names := c.tables
			if names == nil {
				for i := 1; i <= tables; i++ {
					names = append(names, "sbtest"+strconv.Itoa(i))
				}
			}
			drop := func() {
				for _, n := range append([]string{"sbtest1", "sbtest2", "sbtest3"}, c.tables...) {
					_ = conn.Exec(ctx, "DROP TABLE IF EXISTS "+n)
				}
			}
			sysbench := func(cmd string) {
				args := append(append([]string{path}, conn2...), "--threads=1", "--time=0", "--events="+strconv.Itoa(events))
				cmdx := exec.Command(bin, append(append(args, c.opts...), cmd)...)
				// sysbench looks for modules in the working directory, not the script's.
				cmdx.Env = append(cmdx.Environ(), "PGSSLMODE=disable", "LUA_PATH="+filepath.Dir(path)+"/?.lua;;")
				out, err := cmdx.CombinedOutput()
				if err != nil {
					t.Fatalf("sysbench %s: %v\n%s", cmd, err, out)
				}
			}
			// sysbench
			drop()
			w.take()
			sysbench("prepare")
			sbPrep, sbSchema := w.take(), schema(t, ctx, conn, pg, names)
			sysbench("run")
			sbRun := w.take()
			// fathom
			drop()
			sp, err := sblua.Spec(path)
			if err != nil {
				t.Fatal(err)
			}
			wl, err := sp.New(params)
			if err != nil {
				t.Fatal(err)
			}
			fw := wl.(*sblua.Workload)
			if err := fw.UseTarget(tgt); err != nil {
				t.Fatal(err)
			}
			if err := fw.Prepare(ctx, tgt, nil); err != nil {
				t.Fatal(err)
			}
			fPrep, fSchema := w.take(), schema(t, ctx, conn, pg, names)
			if err := fw.Setup(ctx, conn); err != nil {
				t.Fatal(err)
			}
			cc, err := tgt.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			k := wl.NewWorker(0, 1)
			if err := k.Bind(ctx, cc); err != nil {
				t.Fatal(err)
			}
			for range events {
				k.Next()
				if _, err := k.Do(ctx); err != nil {
					t.Fatalf("event: %v", err)
				}
			}
			if err := k.(workload.Finisher).Finish(ctx); err != nil {
				t.Fatal(err)
			}
			cc.Close()
			fRun := w.take()
			drop()

			// The same events on the runner's multiplexed path, two clients taking
			// half each: a script that reads no results is stepped a statement at a
			// time (step.go), and the server must receive the same.
			var stepRun map[string]int
			var restarts int64
			if !pg && c.stepped {
				if err := fw.Prepare(ctx, tgt, nil); err != nil {
					t.Fatal(err)
				}
				w.take()
				res, sum, tuning, yields := runScriptParams(t, tgt, path, params, runner.Config{Clients: 2, Transactions: events / 2})
				stepRun, restarts = w.take(), sum.Retries
				drop()
				t.Logf("two clients: %s, %d statements yielded, %d events restarted (%s)", res.Status, yields, restarts, tuning)
				if res.Status != runner.StatusComplete || !strings.HasPrefix(tuning, "epoll") || yields == 0 {
					t.Errorf("two clients: %s %s, %d statements yielded (%s)", res.Status, res.Reason, yields, tuning)
				}
			}

			if sbSchema != fSchema {
				t.Errorf("prepared tables differ:\nsysbench:\n%s\nfathom:\n%s", sbSchema, fSchema)
			}
			if d := diffCounts(sbPrep, fPrep); d != "" {
				t.Errorf("prepare: statements differ:\n%s", d)
			}
			if d := diffCounts(sbRun, fRun); d != "" {
				t.Errorf("run (%d events): statements differ:\n%s", events, d)
			}
			if d := diffCounts(sbRun, stepRun); stepRun != nil && restarts == 0 && d != "" {
				t.Errorf("run (%d events, two clients stepped): statements differ:\n%s", events, d)
			}
			if stepRun != nil && restarts > 0 {
				// Two clients writing the same rows deadlock now and then, and the event
				// is restarted (as under sysbench with two threads): each template was
				// sent at least as often as by sysbench, and no more often than the
				// restarted events can explain.
				for q, n := range sbRun {
					per := (n + events - 1) / events
					if got := stepRun[q]; got < n || got > n+int(restarts)*per {
						t.Errorf("run (two clients stepped, %d events restarted): %d × %s, want %d to %d", restarts, got, q, n, n+int(restarts)*per)
					}
				}
				for q, n := range stepRun {
					if sbRun[q] == 0 {
						t.Errorf("run (two clients stepped): %d × %s, which sysbench never sent", n, q)
					}
				}
			}
			total := 0
			for q, n := range sbRun {
				total += n
				t.Logf("run: %4d × %.90s", n, q)
			}
			if total < events {
				t.Errorf("the proxy saw %d statements from sysbench's %d events", total, events)
			}
		})
	}
}
