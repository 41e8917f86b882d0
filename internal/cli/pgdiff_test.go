package cli

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

// wireProxy forwards PostgreSQL connections and reads what the client sends: each
// execution of a statement whose text is marked (it names abalance, as every
// pgbench built-in does, or pgdiff, as the harness's scripts do) is counted by its
// normalized text and by protocol: a simple Query, or a Bind of an unnamed or a named
// (prepared) statement.
type wireProxy struct {
	*dbtest.Proxy
	mu    sync.Mutex
	base  int // connections accepted before the last reset
	execs map[string]*protoCount
}

type protoCount struct{ simple, unnamed, named int }

func newWireProxy(t *testing.T, to string) *wireProxy {
	p := &wireProxy{execs: map[string]*protoCount{}}
	p.Proxy = dbtest.StartProxy(t, to, dbtest.ProxyOptions{Pump: func(_ int, up bool, dst io.Writer, src io.Reader) {
		if up {
			p.frontend(src, dst)
		} else {
			_, _ = io.Copy(dst, src)
		}
	}})
	return p
}

// reset clears the counts and returns what they were.
func (p *wireProxy) reset() (conns int, execs map[string]*protoCount) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.Accepted()
	conns, execs = n-p.base, p.execs
	p.base, p.execs = n, map[string]*protoCount{}
	return conns, execs
}

// frontend forwards the client's messages to the server, reading each.
func (p *wireProxy) frontend(c io.Reader, s io.Writer) {
	r := bufio.NewReader(c)
	// Untyped messages first: SSLRequest or GSSENCRequest (answered 'N' with
	// sslmode=disable, then the client goes on), then the startup message.
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[:])-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if _, err := s.Write(append(hdr[:], body...)); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(body[:4]); code != 80877103 && code != 80877104 {
			break
		}
	}
	named := map[string]string{}
	unnamed := ""
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[1:])-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if _, err := s.Write(append(hdr[:], body...)); err != nil {
			return
		}
		fields := strings.Split(string(body), "\x00")
		switch hdr[0] {
		case 'Q':
			p.count(normSQL(fields[0]), func(c *protoCount) { c.simple++ })
		case 'P':
			if fields[0] == "" {
				unnamed = normSQL(fields[1])
			} else {
				named[fields[0]] = normSQL(fields[1])
			}
		case 'B':
			if fields[1] == "" {
				p.count(unnamed, func(c *protoCount) { c.unnamed++ })
			} else {
				p.count(named[fields[1]], func(c *protoCount) { c.named++ })
			}
		}
	}
}

func (p *wireProxy) count(text string, f func(*protoCount)) {
	if !strings.Contains(text, "abalance") && !strings.Contains(text, "pgdiff") {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.execs[text]
	if c == nil {
		c = &protoCount{}
		p.execs[text] = c
	}
	f(c)
}

var (
	sqlParam  = regexp.MustCompile(`\$\d+`)
	sqlNumber = regexp.MustCompile(`-?\b\d+(\.\d+)?\b`)
	sqlSpace  = regexp.MustCompile(`\s+`)
)

// normSQL makes a statement's text comparable between protocols: parameters and
// numbers become ?, white space one blank, no trailing semicolon.
func normSQL(s string) string {
	s = sqlParam.ReplaceAllString(s, "?")
	s = sqlNumber.ReplaceAllString(s, "?")
	s = strings.TrimSpace(sqlSpace.ReplaceAllString(s, " "))
	return strings.TrimSpace(strings.TrimSuffix(s, ";"))
}

// outcome is what one tool did with one command line, as the server saw it.
type outcome struct {
	refused   bool           // refused before connecting
	protocol  string         // of the marked statements: simple, extended, prepared, mixed, none
	execs     map[string]int // marked statement text -> executions
	vacuumed  []string       // tables whose vacuum_count rose
	truncated bool           // pgbench_history's sentinel row was gone
	processed int64          // successful transactions
	skipped   int64
	detail    string
}

func protocolOf(execs map[string]*protoCount) (string, map[string]int) {
	n := map[string]int{}
	var s, u, p int
	for text, c := range execs {
		n[text] = c.simple + c.unnamed + c.named
		s, u, p = s+c.simple, u+c.unnamed, p+c.named
	}
	switch {
	case s+u+p == 0:
		return "none", n
	case u == 0 && p == 0:
		return "simple", n
	case s == 0 && p == 0:
		return "extended", n
	case s == 0 && u == 0:
		return "prepared", n
	}
	return fmt.Sprintf("mixed (simple %d, unnamed %d, named %d)", s, u, p), n
}

// pgdiffCase is one pgbench command line. {f:NAME} is the path of the script NAME,
// {dir} a directory of the tool's own.
type pgdiffCase struct {
	args []string
	// counts: the transactions and each statement's executions are determined by the
	// command line (-t, scripts without branches), so they must be equal.
	counts bool
	// perClient*clients transactions are processed or skipped (-t with -R and -L).
	skipSum int64
	// differs says why fathom differs from pgbench on purpose (README, pgbench
	// section); the case is run and reported, not failed.
	differs string
}

var pgdiffScripts = map[string]string{
	"mod.sql":    "\\set n 7\n\\set k random(1, 100)\nSELECT 'pgdiff', (:k % :n) + 1;\n",
	"scale.sql":  "\\set k random(1, 1000 * :scale)\nSELECT 'pgdiff' AS s, :k, :scale;\n",
	"define.sql": "SELECT 'pgdiff', :x::int + 1;\n",
	"a.sql":      "SELECT 'pgdiff-a', :client_id;\n",
	"b.sql":      "SELECT 'pgdiff-b', 1;\n",
	"tx.sql":     "\\set aid random(1, 100000 * :scale)\nBEGIN;\nSELECT 'pgdiff', abalance FROM pgbench_accounts WHERE aid = :aid;\nUPDATE pgbench_accounts SET abalance = abalance WHERE aid = :aid;\nEND;\n",
	"gset.sql":   "SELECT 'pgdiff' AS tag, 41 AS v \\gset\nSELECT 'pgdiff2', :v + 1;\n",
	"bad.sql":    "SELECT 'pgdiff';\n\\sett x 1\n",
	"sysb.lua":   "function event()\n  db_query('SELECT 1')\nend\n",
}

var pgdiffCases = []pgdiffCase{
	// Accepted: built-ins, protocols, pre-run steps, counts.
	{args: []string{"-S", "-t", "5"}, counts: true},
	{args: []string{"-S", "-t", "5", "-n"}, counts: true},
	{args: []string{"-S", "-t", "5", "-v"}, counts: true},
	{args: []string{"-S", "-t", "5", "-v", "-n"}, counts: true},
	{args: []string{"-S", "-t", "5", "--vacuum-all"}, counts: true},
	{args: []string{"-S"}, counts: true}, // 10 transactions per client by default
	{args: []string{"-b", "tpcb-like", "-t", "4", "-c", "2"}, counts: true},
	{args: []string{"-b", "tpcb", "-t", "4"}, counts: true}, // a prefix of a built-in
	{args: []string{"-N", "-t", "4"}, counts: true},
	{args: []string{"-b", "simple-update", "-t", "4", "-M", "prepared"}, counts: true},
	{args: []string{"-S", "-t", "5", "-M", "prepared"}, counts: true},
	{args: []string{"-S", "-t", "5", "-M", "extended"}, counts: true},
	{args: []string{"-S", "-t", "5", "--protocol=prepared"}, counts: true},
	{args: []string{"-S", "-t", "5", "--protocol", "extended"}, counts: true},
	{args: []string{"-S", "-t", "5", "--client=2"}, counts: true},
	{args: []string{"-S", "-t", "5", "-c", "2", "-j", "2"}, counts: true},
	{args: []string{"-r", "-t", "4"}, counts: true}, // no script: tpcb-like
	{args: []string{"-D", "x=1", "-t", "4"}, counts: true},
	{args: []string{"-S", "-t", "5", "--random-seed=7"}, counts: true},
	{args: []string{"-S", "-t", "5", "--random-seed=time"}, counts: true},
	{args: []string{"-S", "-t", "5", "--random-seed=rand"}, counts: true},
	{args: []string{"-S", "-t", "5", "-d"}, counts: true},
	{args: []string{"-S", "-t", "5", "--verbose-errors", "--failures-detailed"}, counts: true},
	{args: []string{"-S", "-t", "5", "-P", "1"}, counts: true},
	{args: []string{"-S", "-t", "5", "--progress=1"}, counts: true},
	{args: []string{"-S", "-t", "5", "-C"}, counts: true},
	{args: []string{"-S", "-t", "5", "-s", "3"}, counts: true},
	{args: []string{"-S", "-t", "5", "--max-tries=3"}, counts: true},
	{args: []string{"-S", "-T", "1", "--max-tries=0"}},
	{args: []string{"-S", "-T", "1"}},
	{args: []string{"-S", "-t", "40", "-R", "50000", "-L", "0.01"}, skipSum: 40},
	{args: []string{"-S", "-t", "5", "-R", "1000"}, counts: true},
	{args: []string{"-S", "-t", "5", "-l", "--log-prefix", "{dir}/x"}, counts: true},
	{args: []string{"-S", "-t", "20", "-l", "--log-prefix", "{dir}/x", "--sampling-rate", "0.5"}, counts: true},
	{args: []string{"-S", "-T", "2", "-l", "--log-prefix", "{dir}/x", "--aggregate-interval", "1"}},
	{args: []string{"-f", "{f:mod.sql}", "-t", "5"}, counts: true},
	{args: []string{"-f", "{f:mod.sql}", "-t", "5", "-M", "extended"}},
	{args: []string{"-f", "{f:scale.sql}", "-t", "5", "-s", "3"}, counts: true},
	{args: []string{"-f", "{f:define.sql}", "-t", "5", "-D", "x=4"}, counts: true},
	{args: []string{"-f", "{f:define.sql}", "-t", "5", "-D", "x=4", "-M", "prepared"}, counts: true},
	{args: []string{"-f", "{f:a.sql}@0", "-f", "{f:b.sql}@1", "-t", "6"}, counts: true},
	{args: []string{"-f", "{f:tx.sql}", "-t", "5", "-c", "2"}, counts: true},
	{args: []string{"-f", "{f:tx.sql}", "-t", "5", "-n", "-M", "prepared"}, counts: true},
	{args: []string{"-f", "{f:tx.sql}", "-b", "select-only@0", "-t", "5"}, counts: true},
	{args: []string{"-f", "{f:gset.sql}", "-t", "5"}, counts: true,
		differs: "in -M simple, fathom sends a statement whose results \\gset keeps as an unnamed statement (extended protocol), pgbench as a simple query"},
	{args: []string{"-t", "4"}, counts: true,
		differs: "with neither -w nor a pgbench script flag, fathom runs its own tpcb workload (prepared protocol); -b tpcb-like is pgbench's"},
	{args: []string{"-S", "-t", "5", "-L", "5"},
		differs: "-L without -R: pgbench counts transactions above the limit; fathom refuses it (its percentiles say the same)"},
	{args: []string{"-f", "{f:sysb.lua}", "-t", "1"},
		differs: "a .lua file: pgbench sends it as SQL; fathom refuses a .lua given to -f and names -w, which runs sysbench scripts (safer)"},

	// Refused before running, by both.
	{args: []string{"-S", "-t", "2", "-R", "0"}},
	{args: []string{"-S", "-t", "2", "--rate=0"}},
	{args: []string{"-S", "-t", "2", "-R", "-5"}},
	{args: []string{"-S", "-T", "0"}},
	{args: []string{"-S", "-T", "2", "-t", "3"}},
	{args: []string{"-S", "-T", "3", "-l", "--log-prefix", "{dir}/x", "--aggregate-interval=2"}},
	{args: []string{"-S", "-T", "1", "-l", "--log-prefix", "{dir}/x", "--aggregate-interval=2"}},
	{args: []string{"-S", "-t", "3", "-L", "0"}},
	{args: []string{"-S", "-t", "3", "--max-tries=0"}},
	{args: []string{"-S", "-t", "3", "--max-tries=-1"}},
	{args: []string{"-S", "-c", "0", "-t", "1"}},
	{args: []string{"-S", "-t", "0"}},
	{args: []string{"-S", "-j", "0", "-t", "1"}},
	{args: []string{"-S", "-P", "0", "-t", "1"}},
	{args: []string{"-S", "--progress-timestamp", "-t", "1"}},
	{args: []string{"-S", "-t", "1", "--sampling-rate", "0.5"}},
	{args: []string{"-S", "-t", "1", "--log-prefix", "{dir}/x"}},
	{args: []string{"-S", "-t", "1", "--aggregate-interval", "1"}},
	{args: []string{"-S", "-t", "1", "-l", "--log-prefix", "{dir}/x", "--sampling-rate", "0"}},
	{args: []string{"-S", "-t", "1", "-l", "--log-prefix", "{dir}/x", "--sampling-rate", "1.5"}},
	{args: []string{"-S", "-t", "1", "-l", "--log-prefix", "{dir}/x", "--aggregate-interval", "0"}},
	{args: []string{"-S", "-t", "1", "-l", "--log-prefix", "{dir}/x", "--aggregate-interval", "1", "--sampling-rate", "0.5"}},
	{args: []string{"-S", "-t", "1", "-s", "0"}},
	{args: []string{"-S", "-t", "1", "-M", "fast"}},
	{args: []string{"-S", "-t", "1", "--random-seed=soon"}},
	{args: []string{"-S", "-t", "1", "-D", "noequals"}},
	{args: []string{"-b", "nope", "-t", "1"}},
	{args: []string{"-f", "{dir}/missing.sql", "-t", "1"}},
	{args: []string{"-f", "{f:bad.sql}", "-t", "1"}},
	{args: []string{"-f", "{f:mod.sql}@x", "-t", "1"}},
	{args: []string{"-f", "{f:a.sql}@0", "-t", "1"}},
}

var (
	pgbenchProcessed = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
	pgbenchSkipped   = regexp.MustCompile(`number of transactions skipped: (\d+)`)
)

// TestPgbenchCommandLineDifferential runs each command line of pgdiffCases through pgbench and
// through fathom against the same database, through a proxy that reads the wire
// protocol, and compares: refused before running or not; the protocol and the
// statements the server received, with their counts; the pre-run steps (vacuums,
// the history truncated); the transactions processed and skipped.
func TestPgbenchCommandLineDifferential(t *testing.T) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		if dbtest.Required() {
			t.Fatal("pgbench is not installed but FATHOM_TEST_REQUIRE=1: install PostgreSQL's client tools (postgresql-client)")
		}
		t.Skip("pgbench is not installed: skipping the differential test against it")
	}
	dsn := dbtest.PostgresDatabase(t, "pgdiff")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newWireProxy(t, u.Host)
	host, port, _ := net.SplitHostPort(proxy.Addr())
	db := strings.TrimPrefix(u.Path, "/")
	pgEnv := append(os.Environ(), "PGSSLMODE=disable", "PGHOST="+host, "PGPORT="+port, "PGUSER="+u.User.Username(), "PGDATABASE="+db, "PGAPPNAME=pgdiff")
	if pw, ok := u.User.Password(); ok {
		pgEnv = append(pgEnv, "PGPASSWORD="+pw)
	}
	via := *u
	via.Host = proxy.Addr()
	q := via.Query()
	q.Set("sslmode", "disable")
	via.RawQuery = q.Encode()
	init := exec.Command(pgbench, "-i", "-s", "1", "-q")
	init.Env = pgEnv
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	scripts := t.TempDir()
	for name, src := range pgdiffScripts {
		if err := os.WriteFile(filepath.Join(scripts, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := storeEnv(t)

	state := func() (vac map[string]int, sentinel int) {
		vac = map[string]int{}
		for _, r := range rowsOf(t, dsn, "SELECT relname, vacuum_count FROM pg_stat_user_tables WHERE relname IN ('pgbench_branches', 'pgbench_tellers', 'pgbench_accounts')") {
			vac[r[0]], _ = strconv.Atoi(r[1])
		}
		return vac, queryInt(t, dsn, "SELECT count(*) FROM pgbench_history WHERE tid = -7")
	}
	measure := func(run func() (refused bool, processed, skipped int64, detail string)) outcome {
		rowsOf(t, dsn, "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (-7, 1, 1, 0, now()) RETURNING tid")
		vac0, _ := state()
		proxy.reset()
		var o outcome
		o.refused, o.processed, o.skipped, o.detail = run()
		conns, execs := proxy.reset()
		o.refused = o.refused && conns == 0
		o.protocol, o.execs = protocolOf(execs)
		vac1, sentinel := state()
		for _, tb := range slices.Sorted(maps.Keys(vac1)) {
			if vac1[tb] > vac0[tb] {
				o.vacuumed = append(o.vacuumed, tb)
			}
		}
		o.truncated = sentinel == 0
		return o
	}
	expand := func(args []string, dir string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			a = strings.ReplaceAll(a, "{dir}", dir)
			for name := range pgdiffScripts {
				a = strings.ReplaceAll(a, "{f:"+name+"}", filepath.Join(scripts, name))
			}
			out[i] = a
		}
		return out
	}

	agree, known := 0, 0
	var report []string
	for i, c := range pgdiffCases {
		line := strings.Join(c.args, " ")
		pg := measure(func() (bool, int64, int64, string) {
			cmd := exec.Command(pgbench, expand(c.args, t.TempDir())...)
			cmd.Env, cmd.Dir = pgEnv, t.TempDir()
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("pgbench %s: %v", line, err)
			}
			var n, sk int64
			if m := pgbenchProcessed.FindSubmatch(out); m != nil {
				n, _ = strconv.ParseInt(string(m[1]), 10, 64)
			}
			if m := pgbenchSkipped.FindSubmatch(out); m != nil {
				sk, _ = strconv.ParseInt(string(m[1]), 10, 64)
			}
			return code == 1, n, sk, lastLine(string(out))
		})
		fa := measure(func() (bool, int64, int64, string) {
			args := append([]string{"run", "--target", via.String(), "--json", "-q"}, expand(c.args, t.TempDir())...)
			r := fathom(t, env, nil, args...)
			if r.code == exitUsage {
				return true, 0, 0, lastLine(r.stderr)
			}
			if r.code != 0 {
				return false, 0, 0, fmt.Sprintf("exit %d: %s", r.code, lastLine(r.stderr))
			}
			s := summary(t, r)
			return false, s.Transactions, s.Dropped, ""
		})
		diffs := pgdiffCompare(c, pg, fa)
		switch {
		case c.differs != "" && len(diffs) == 0:
			t.Errorf("case %d `%s`: listed as differing (%s) but agrees now: take it off the list", i, line, c.differs)
		case c.differs != "":
			known++
			report = append(report, fmt.Sprintf("differs on purpose: `%s`: %s (%s)", line, c.differs, strings.Join(diffs, "; ")))
		case len(diffs) > 0:
			t.Errorf("case %d `%s`: fathom differs from pgbench: %s\n  pgbench: %+v\n  fathom:  %+v", i, line, strings.Join(diffs, "; "), pg, fa)
		default:
			agree++
		}
	}
	t.Logf("%d command lines: %d agree with pgbench, %d differ on purpose", len(pgdiffCases), agree, known)
	for _, r := range report {
		t.Log(r)
	}
}

// pgdiffCompare lists what fathom did otherwise than pgbench.
func pgdiffCompare(c pgdiffCase, pg, fa outcome) []string {
	var d []string
	if pg.refused != fa.refused {
		return []string{fmt.Sprintf("refused: pgbench %v (%s), fathom %v (%s)", pg.refused, pg.detail, fa.refused, fa.detail)}
	}
	if pg.refused {
		return nil
	}
	if c.skipSum > 0 && (pg.protocol == "none" || fa.protocol == "none") {
		// Every start was late: which ran at all is the schedule's, not the protocol's.
		pg.protocol, fa.protocol, pg.execs, fa.execs = "", "", nil, nil
	}
	if pg.protocol != fa.protocol {
		d = append(d, fmt.Sprintf("protocol: pgbench %s, fathom %s", pg.protocol, fa.protocol))
	}
	if !slices.Equal(slices.Sorted(maps.Keys(pg.execs)), slices.Sorted(maps.Keys(fa.execs))) {
		d = append(d, fmt.Sprintf("statements: pgbench %v, fathom %v", slices.Sorted(maps.Keys(pg.execs)), slices.Sorted(maps.Keys(fa.execs))))
	} else if c.counts && !maps.Equal(pg.execs, fa.execs) {
		d = append(d, fmt.Sprintf("executions: pgbench %v, fathom %v", pg.execs, fa.execs))
	}
	if !slices.Equal(pg.vacuumed, fa.vacuumed) || pg.truncated != fa.truncated {
		d = append(d, fmt.Sprintf("pre-run: pgbench vacuumed %v truncated %v, fathom vacuumed %v truncated %v", pg.vacuumed, pg.truncated, fa.vacuumed, fa.truncated))
	}
	if c.counts && (pg.processed != fa.processed || pg.skipped != fa.skipped) {
		d = append(d, fmt.Sprintf("transactions: pgbench %d (%d skipped), fathom %d (%d skipped)", pg.processed, pg.skipped, fa.processed, fa.skipped))
	}
	if c.skipSum > 0 && (pg.processed+pg.skipped != c.skipSum || fa.processed+fa.skipped != c.skipSum) {
		d = append(d, fmt.Sprintf("processed + skipped: pgbench %d + %d, fathom %d + %d, want %d", pg.processed, pg.skipped, fa.processed, fa.skipped, c.skipSum))
	}
	return d
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
